"""The executor side of the audit: one ``mapInArrow`` pass that makes each scenario's spec in
the Python worker, runs every target on it, and yields one row per (scenario, target).

`result_schema` is the rows' Arrow schema; `run_targets` the function Spark maps over the
input batches (scenario ids, or corpus rows).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from ..model.story_shapes import StorySpec
from .call_timeout import CALL_TIMEOUT
from .chain import INVARIANTS, replay_record, run_chain
from .corpus import corpus_spec
from .evidence import label
from .scenarios import random_spec, spec_size
from .targets import Resolver, reference_name, resolve_cached

__all__ = ["result_schema", "run_targets"]


def _specs(batch: Any, seed: int | None) -> Iterator[tuple[int, StorySpec]]:
    """(scenario, spec) for each row of an input batch: ``spark.range`` ids made into
    random specs from (seed, id), or corpus rows (scenario, value) parsed."""
    if seed is not None:
        for index in batch.column(0).to_pylist():
            yield index, random_spec(seed, index)
        return
    rows = batch.to_pydict()
    for index, text in zip(rows["scenario"], rows["value"], strict=True):
        yield index, corpus_spec(text)


def result_schema() -> Any:
    """The Arrow schema of the rows: one per (scenario, target)."""
    import pyarrow as pa

    fields = [("scenario", pa.int64()), ("target", pa.string()), ("assignor", pa.string()),
              ("tier", pa.int32()), ("members", pa.int32()), ("topics", pa.int32()),
              ("partitions", pa.int32()), ("rounds", pa.int32()), ("calls", pa.int32())]
    fields += [(inv, pa.int8()) for inv in INVARIANTS]
    fields += [("violated", pa.bool_()), ("violation", pa.string()),
               ("inherited", pa.string()), ("moves", pa.int64()),
               ("imbalance", pa.int32()), ("topic_imbalance", pa.int32()),
               ("kafka_balanced", pa.bool_()), ("unowned", pa.int32()),
               ("assign_ms", pa.float64()), ("fingerprint", pa.string()),
               ("differs_from", pa.string()), ("replay", pa.string())]
    return pa.schema(fields)


def run_targets(names: list[str], resolver: Resolver, seed: int | None,
                reference: str | None = None) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """mapInArrow over scenario ids (``seed`` given) or corpus rows (``seed`` None): each
    spec is made in the worker and every target runs on it, one row per target. Making
    the specs here, in the same Python pass, keeps specs off the JVM and the wire. With a
    ``reference``, a violated story is asked of it (`evidence`)."""

    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = result_schema()
        targets = [resolve_cached(resolver, name) for name in names]
        refs = [resolve_cached(resolver, reference_name(reference, t.assignor))
                if reference else None for t in targets]
        for batch in batches:
            out: dict[str, list[Any]] = {f.name: [] for f in schema}
            for index, spec in _specs(batch, seed):
                _result_rows(out, targets, index, spec, seed, refs)
            yield pa.RecordBatch.from_pydict(out, schema=schema)

    return fn


def _result_rows(out: dict[str, list[Any]], targets: list[Any], index: int,
                 spec: StorySpec, seed: int | None,
                 refs: list[Any] | None = None) -> None:
    """Append one row per target for scenario ``index`` to the columns ``out``; a violated
    story is relabelled from the evidence of the target's reference in ``refs``."""
    size = spec_size(spec)
    results = [run_chain(t, spec) for t in targets]
    for t, r, ref in zip(targets, results, refs or [None] * len(targets), strict=True):
        if ref is not None and r.violated:
            label(r, t, ref, CALL_TIMEOUT)
    prints = [r.fingerprint() for r in results]
    for t, r, fp in zip(targets, results, prints, strict=True):
        out["scenario"].append(index)
        out["target"].append(t.name)
        out["assignor"].append(t.assignor)
        out["tier"].append(int(spec.get("tier", -1)))
        for key in ("members", "topics", "partitions", "rounds"):
            out[key].append(size[key])
        out["calls"].append(r.calls)
        for inv in INVARIANTS:
            out[inv].append(r.verdicts[inv])
        out["violated"].append(r.violated)
        out["violation"].append(r.violations[0] if r.violations else None)
        out["inherited"].append(r.inherited_column())
        out["moves"].append(r.moves)
        out["imbalance"].append(r.imbalance)
        out["topic_imbalance"].append(r.topic_imbalance)
        out["kafka_balanced"].append(r.kafka_balanced)
        out["unowned"].append(r.unowned)
        out["assign_ms"].append(r.assign_ms)
        out["fingerprint"].append(fp)
        out["differs_from"].append(",".join(
            o.name for o, ofp in zip(targets, prints, strict=True)
            if o is not t and ofp != fp))
        out["replay"].append(json.dumps(replay_record(t, spec, r, index, seed),
                                        separators=(",", ":")) if r.violated else None)
