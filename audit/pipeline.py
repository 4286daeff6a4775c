"""The PySpark audit: scenarios → targets on executors → per-scenario rows → aggregates.

Layout of ``--out DIR``::

    run.json                       the parameters (a rerun with others is refused)
    results/chunk=00007/target=…/  per-scenario rows (Parquet), one folder per chunk
    results/_done/chunk-00007.json the chunk's marker, written atomically after its rows
    aggregates/{invariants,by_size,disagreement}/   Parquet, partitioned by target
    counterexamples/*.json         the smallest counterexample per (target, invariant)
    summary.json  timings.json  index.html  *.svg

Scenarios are processed in chunks of consecutive indexes. A chunk's rows are written to a
hidden temporary folder, renamed into place, and only then is its marker written (write to a
temporary file + rename), so after a crash or ``kill -9`` a rerun drops any chunk folder
without a marker and runs exactly the chunks that lack one: no scenario is counted twice.

Nothing loops over scenarios on the driver and nothing collects per-scenario data: a
chunk's input is a range of scenario ids (`scenario_frame`); one ``mapInArrow`` pass over
Arrow batches (`run_targets`) makes each spec from (seed, id) in the Python worker and runs
every target on it, so no spec crosses the JVM; `IN_FLIGHT` chunks run at once so that no
core idles behind one chunk's slowest task; and only aggregates — a few rows per target —
come back to the driver.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .call_timeout import CALL_TIMEOUT
from .chain import INVARIANTS, run_chain
from .chain import replay_record as _replay_record
from .corpus import corpus_spec
from .evidence import label, reference_name
from .examples import shrink_and_draw
from .progress import Progress
from .scenarios import random_spec, spec_size
from .session import spark_session
from .targets import Resolver, plugin_file, resolve_cached

RUN_FORMAT = "groupcheck-audit-run/1"
SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
#: Chunks (Spark jobs) run at once: while one waits for its slowest task, the next one's
#: tasks keep the other cores busy.
IN_FLIGHT = 2


class AuditError(Exception):
    """A problem with the audit's arguments or output folder (exit code 2)."""


@dataclass
class AuditConfig:
    targets: list[str]
    scenarios: int = 100_000
    seed: int = 0
    master: str | None = None  # None: local[*], or spark-submit's --master
    out: str = "audit-out"
    chunk_size: int = 0  # 0: about 20 chunks, at least 2,000 scenarios each
    slices: int = 0  # Spark partitions per chunk; 0: one per core (at least 2)
    corpus: str | None = None
    in_flight: int = 0  # chunks run at once; 0: IN_FLIGHT
    #: a target whose reproduction of a violation labels it (``evidence``), e.g. ``java:``
    reference: str | None = None
    shrink_seconds: float = 60.0  # shrinking the smallest examples, on the driver
    extra_conf: dict[str, str] = field(default_factory=dict)

    def run_params(self) -> dict[str, Any]:
        """What must match for a rerun to resume (master and slices may change)."""
        return {"format": RUN_FORMAT, "targets": list(self.targets),
                "scenarios": self.scenarios, "seed": self.seed,
                "chunk_size": self.effective_chunk_size(),
                "corpus": os.path.abspath(self.corpus) if self.corpus else None,
                "reference": self.reference}

    def effective_chunk_size(self) -> int:
        if self.chunk_size > 0:
            return self.chunk_size
        return max(2000, -(-self.scenarios // 20))

    def chunks(self) -> list[tuple[int, int, int]]:
        size = self.effective_chunk_size()
        return [(i, lo, min(self.scenarios, lo + size))
                for i, lo in enumerate(range(0, self.scenarios, size))]


# ---------------------------------------------------------------------------------------
# Executor-side functions (mapInArrow)


def _specs(batch: Any, seed: int | None) -> Iterator[tuple[int, dict[str, Any]]]:
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
                 spec: dict[str, Any], seed: int | None,
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
        out["replay"].append(json.dumps(_replay_record(t, spec, r, index, seed),
                                        separators=(",", ":")) if r.violated else None)


# ---------------------------------------------------------------------------------------
# Driver side


def scenario_frame(spark: Any, config: AuditConfig, lo: int, hi: int, slices: int) -> Any:
    """The input of chunk [lo, hi): scenario ids (``spark.range``, nothing shipped), or
    the corpus files with those indexes as (scenario, value) rows."""
    if config.corpus:
        from pyspark.sql import functions as F

        files = (spark.read.text(os.path.join(os.path.abspath(config.corpus), "*.json"),
                                 wholetext=True)
                 .select(F.input_file_name().alias("path"), "value"))
        indexed = (files.rdd.sortBy(lambda row: row[0], numPartitions=1).zipWithIndex()
                   .filter(lambda pair: lo <= pair[1] < hi)
                   .map(lambda pair: (pair[1], pair[0][1])))
        return spark.createDataFrame(indexed, "scenario long, value string").repartition(slices)
    return spark.range(lo, hi, 1, slices)


def corpus_size(spark: Any, corpus: str) -> int:
    pattern = os.path.join(os.path.abspath(corpus), "*.json")
    try:
        return int(spark.read.text(pattern, wholetext=True).count())
    except Exception as exc:  # noqa: BLE001 - Spark's AnalysisException: no such path
        raise AuditError(f"cannot read the corpus {corpus}: {str(exc).splitlines()[0]}"
                         ) from None


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _prepare_out(config: AuditConfig) -> tuple[Path, set[int]]:
    """Create or resume ``config.out``; returns it and the chunks already done."""
    out = Path(config.out)
    results = out / "results"
    done_dir = results / "_done"
    params = config.run_params()
    run_file = out / "run.json"
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError:
            previous = None
        if previous != params:
            raise AuditError(f"{out} holds an audit with other parameters; use another --out "
                             "or --fresh")
    done_dir.mkdir(parents=True, exist_ok=True)
    if not run_file.exists():
        _write_json_atomic(run_file, params)
    done = {int(p.stem.split("-")[1]) for p in done_dir.glob("chunk-*.json")}
    for child in results.iterdir():  # half-written chunks of an interrupted run
        if child.name.startswith("_tmp-") or (
                child.name.startswith("chunk=") and int(child.name[6:]) not in done):
            shutil.rmtree(child, ignore_errors=True)
    return out, done


def _run_chunk(spark: Any, config: AuditConfig, fn: Callable[[Iterator[Any]], Iterator[Any]],
               results: Path, chunk: tuple[int, int, int], slices: int) -> int:
    """Run one chunk: rows to a hidden folder, renamed into place, then the marker."""
    index, lo, hi = chunk
    frame = scenario_frame(spark, config, lo, hi, min(slices, hi - lo))
    rows = frame.mapInArrow(fn, _spark(result_schema()))
    tmp = results / f"_tmp-chunk={index:05d}"
    shutil.rmtree(tmp, ignore_errors=True)
    rows.write.partitionBy("target").parquet(str(tmp))
    final = results / f"chunk={index:05d}"
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_json_atomic(results / "_done" / f"chunk-{index:05d}.json",
                       {"chunk": index, "first": lo, "end": hi, "scenarios": hi - lo,
                        "targets": list(config.targets)})
    return hi - lo


def _run_chunks(spark: Any, config: AuditConfig, fn: Callable[[Iterator[Any]], Iterator[Any]],
                results: Path, todo: list[tuple[int, int, int]], slices: int,
                bar: Progress | None) -> int:
    """Run the chunks ``todo``, `IN_FLIGHT` Spark jobs at a time (one driver thread each),
    so the cores never wait for one chunk's slowest task; returns how many ran."""
    import threading
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    lock = threading.Lock()
    ran = 0

    def one(chunk: tuple[int, int, int]) -> None:
        nonlocal ran
        scenarios = _run_chunk(spark, config, fn, results, chunk, slices)
        with lock:
            ran += 1
            if bar is not None:
                bar.update(scenarios)

    with ThreadPoolExecutor(max_workers=config.in_flight or IN_FLIGHT) as pool:
        futures = [pool.submit(one, chunk) for chunk in todo]
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            future.cancel()
        for future in finished:
            future.result()  # re-raise the first failure, if any
    return ran


@dataclass
class AuditOutcome:
    out: Path
    summary: dict[str, Any]
    seconds: float
    chunks_run: int

    @property
    def ok(self) -> bool:
        return bool(self.summary["ok"])


def run_audit(config: AuditConfig, resolver: Resolver, spark: Any | None = None,
              progress: bool = True) -> AuditOutcome:
    """Run (or resume) an audit and write its outputs (see the module docstring)."""
    from . import report

    started = time.perf_counter()
    if not config.targets:
        raise AuditError("audit needs at least one --target")
    if len(set(config.targets)) != len(config.targets):
        raise AuditError("a --target is given twice")
    for name in config.targets:  # fail fast, with one line, on the driver
        try:
            assignor = resolver(name).assignor
            if config.reference:
                resolver(reference_name(config.reference, assignor))
        except ValueError as exc:
            raise AuditError(str(exc)) from None
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        own_session = spark is None
    else:
        own_session = False
    if spark is None:
        spark = spark_session(config.master, out / "_package", config.extra_conf)
    for name in config.targets:
        path = plugin_file(name)
        if path:
            spark.sparkContext.addFile(path)
    try:
        if config.corpus:
            config.scenarios = corpus_size(spark, config.corpus)
        out, done = _prepare_out(config)
        chunks = config.chunks()
        slices = config.slices or max(2, int(spark.sparkContext.defaultParallelism))
        bar = Progress(config.scenarios, sum(hi - lo for i, lo, hi in chunks if i in done))
        fn = run_targets(list(config.targets), resolver,
                         None if config.corpus else config.seed, config.reference)
        todo = [(i, lo, hi) for i, lo, hi in chunks if i not in done]
        chunks_run = _run_chunks(spark, config, fn, out / "results", todo, slices,
                                 bar if progress else None)
        if progress:
            bar.close()
        chunks_done = time.perf_counter()
        summary, timings = report.aggregate(spark, out, config)
        aggregated = time.perf_counter()
        timings["chunks_seconds"] = round(chunks_done - started, 3)
        timings["aggregate_seconds"] = round(aggregated - chunks_done, 3)
        timings["chunks_run"] = chunks_run
        report.write_summary(out, summary)
        figures, timings["shrink"] = shrink_and_draw(out, summary, resolver,
                                                     config.shrink_seconds)
        report.write_html(out, summary, timings, figures)
        timings["wall_seconds"] = round(time.perf_counter() - started, 3)
        _write_json_atomic(out / "timings.json", timings)
        return AuditOutcome(out, summary, time.perf_counter() - started, chunks_run)
    finally:
        if own_session:
            spark.stop()


def _spark(arrow_schema: Any) -> Any:
    """The Spark schema of an Arrow schema."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema)
