"""The audit's last driver-side step: shrink each smallest example and draw it.

`aggregate` (``report.py``) leaves one replay file per (target, invariant) under
``counterexamples/`` and ``inherited/``: a handful of files, never the rows. Here, on the
driver, each story is shrunk (``shrink.py``) within an equal share of the shrink budget,
keeping its failure (the invariant, and the Kafka rule of an inherited one), and written
beside the original as ``<name>.shrunk.json`` (same format: ``groupcheck replay``,
``groupcheck shrink`` and ``--corpus`` read it). Each example, shrunk or not, is drawn as an
ownership timeline (``picture.py``) for the report. What the shrink did goes to
``timings.json``, not to ``summary.json``: that one stays byte-identical for a seed, and a
budget measured in seconds is not.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from ..properties.deviations import EVIDENCE
from ..properties.saved_json import steady_text
from .chain import ChainFile, replay_record
from .picture import chain_timeline, svg
from .story_shrink import Failure, ShrinkError, shrink_story
from .summary_shapes import AuditSummary, ExampleEntry, ShrinkDone
from .targets import Resolver, reference_name

__all__ = ["shrink_and_draw"]


def _examples(summary: AuditSummary) -> list[tuple[str, str, ExampleEntry]]:
    """(target, invariant, summary entry) of every smallest example, own ones first."""
    out = []
    for examples in (summary.get("counterexamples", {}),
                     summary.get("inherited_examples", {})):
        for target, per in sorted(examples.items()):
            for inv, entry in sorted(per.items()):
                out.append((target, inv, entry))
    return out


def _shrink_one(out: Path, resolver: Resolver, target_name: str, inv: str,
                entry: ExampleEntry, seconds: float, reference: str | None = None
                ) -> tuple[ChainFile, ShrinkDone | None]:
    """The record to draw (the shrunk one where shrinking worked) and what it did; with a
    ``reference`` the shrunk story keeps its label from evidence (`shrink.play`)."""
    path = out / entry["file"]
    record: ChainFile = json.loads(path.read_text(encoding="utf-8"))
    spec = record["spec"]
    if seconds <= 0 or spec.get("kind") == "requests":
        return record, None
    target = resolver(target_name)
    ref = resolver(reference_name(reference, target.assignor)) if reference else None
    rule = EVIDENCE if entry.get("label") == "evidence" else entry.get("rule")
    try:
        result = shrink_story(spec, target, Failure(inv, rule), seconds=seconds,
                              reference=ref)
    except ShrinkError as exc:  # e.g. a timeout that did not recur on the driver
        return record, {"error": str(exc)}
    shrunk = replay_record(target, result.spec, result.chain, record["scenario"],
                           record.get("seed"))
    shrunk["invariant"] = inv
    shrunk["shrink"] = result.summary()
    name = path.with_suffix(".shrunk.json")
    name.write_text(steady_text(shrunk), encoding="utf-8")
    return shrunk, {**result.summary(), "runs": result.runs,
                    "seconds": round(result.seconds, 3),
                    "file": str(name.relative_to(out))}


def shrink_and_draw(out: Path, summary: AuditSummary, resolver: Resolver,
                    seconds: float) -> tuple[list[str], dict[str, ShrinkDone]]:
    """HTML figures of every smallest example (shrunk where possible) and, per example
    file, what shrinking did (for ``timings.json``)."""
    examples = _examples(summary)
    share = seconds / len(examples) if examples else 0.0
    figures: list[str] = []
    done: dict[str, ShrinkDone] = {}
    for target, inv, entry in examples:
        record, shrink = _shrink_one(out, resolver, target, inv, entry, share,
                                     summary.get("reference"))
        if shrink is not None:
            done[entry["file"]] = shrink
        figures.append(_figure(target, inv, entry, shrink, svg(chain_timeline(record))))
    return figures, done


def _figure(target: str, inv: str, entry: ExampleEntry, shrink: ShrinkDone | None,
            picture: str) -> str:
    e = html.escape
    rule = f" (Kafka's own, rule {e(entry['rule'])})" if entry.get("rule") else ""
    caption = (f"{e(target)} {e(inv)}{rule}: scenario {entry['scenario']}, "
               f"{entry['members']} members, {entry['partitions']} partitions")
    if shrink and "to" in shrink:
        to = shrink["to"]
        caption += (f"; shrunk to {to['members']} members, {to['partitions']} partitions, "
                    f"{to['rounds']} rebalance(s)"
                    + ("" if shrink["complete"] else " (budget spent)")
                    + f': <a href="{e(shrink["file"])}">{e(shrink["file"])}</a>')
    elif shrink:
        caption += f"; not shrunk: {e(shrink['error'])}"
    return f"<figure>{picture}<figcaption>{caption}</figcaption></figure>"
