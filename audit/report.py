"""Aggregates of an audit's rows, ``summary.json`` and the counterexample files (the HTML
page is `report_html`).

Everything in ``summary.json`` is an integer count or exact statistic of integer columns,
written with sorted keys, so the same seed gives the same bytes whatever the master, the
number of partitions or the order in which chunks ran. Timings live in ``timings.json`` and
in the HTML report only. The rows Spark collects stay untyped dicts: their columns are
named at run time, from the invariants and the targets (``I1__checked``, ``differs__0``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..properties.deviations import EVIDENCE
from ..properties.kafka_rules import RULES
from ..properties.saved_json import steady_text
from .chain import INVARIANTS
from .config import AuditConfig
from .evidence import label_entry
from .rows import result_schema
from .session import spark_schema
from .summary_shapes import (
    AuditSummary,
    ChainFile,
    ExampleEntry,
    InvariantCount,
    LabelEntry,
    Metric,
    SizeEntry,
    SizeTiming,
    Timings,
)

__all__ = ["BUCKETS", "METRICS", "SUMMARY_FORMAT", "aggregate", "metric_of", "write_summary"]

SUMMARY_FORMAT = "groupcheck-audit-summary/1"
BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
METRICS = ("moves", "imbalance", "topic_imbalance", "unowned")
#: target → invariant → the smallest example
Examples = dict[str, dict[str, ExampleEntry]]


def _invariant_of(violation: str) -> str:
    """``"I4a: ..."`` → ``I4``; ``"TIMEOUT: ..."`` → ``TIMEOUT``."""
    head = violation.split(":", 1)[0]
    return head.rstrip("ab") if head.startswith("I") else head


def _bucket_label(low: int) -> str:
    i = BUCKETS.index(low)
    high = BUCKETS[i + 1] - 1 if i + 1 < len(BUCKETS) else 200
    return str(low) if high == low else f"{low}-{high}"


def _safe_name(target: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", target).strip("-")


def _bucket_column(F: Any) -> Any:
    col = F.lit(BUCKETS[0])
    for low in BUCKETS[1:]:
        col = F.when(F.col("members") >= low, F.lit(low)).otherwise(col)
    return col


def _read_rows(spark: Any, out: Path, config: AuditConfig) -> Any:
    """Every per-scenario row of the finished chunks (one folder per chunk)."""
    results = out / "results"
    from pyspark.sql.types import IntegerType, StructField

    schema = spark_schema(result_schema())  # given, so Spark need not read footers to infer it
    schema.add(StructField("chunk", IntegerType()))
    paths = [str(results / f"chunk={i:05d}") for i, _, _ in config.chunks()]
    return spark.read.schema(schema).option("basePath", str(results)).parquet(*paths)


def _cell_aggregates(F: Any, targets: list[str]) -> list[Any]:
    """The aggregates of one (target, size bucket) cell, cheap per row; the per-target
    figures are summed from the cells on the driver."""
    aggs = [F.count("*").alias("rows"), F.countDistinct("scenario").alias("scenarios"),
            F.sum("calls").alias("calls"),
            F.sum(F.when(~F.col("kafka_balanced"), 1).otherwise(0)).alias("kafka_unbalanced"),
            F.sum("assign_ms").alias("assign_ms_sum"), F.max("assign_ms").alias("assign_ms_max")]
    aggs += [F.count(F.col(inv)).alias(f"{inv}__checked") for inv in INVARIANTS]
    for m in METRICS:
        aggs += [F.sum(m).alias(f"{m}_sum"), F.max(m).alias(f"{m}_max"),
                 F.expr(f"percentile({m}, array(0.5, 0.9, 0.99))").alias(f"{m}_pct")]
    differs = F.split(F.col("differs_from"), ",")
    for i, u in enumerate(targets):
        aggs.append(F.sum(F.when(F.array_contains(differs, u), 1).otherwise(0))
                    .alias(f"differs__{i}"))
    return aggs


def _violation_aggregates(F: Any) -> list[Any]:
    """Per target, over the violating rows only (few, so the replay strings stay cheap):
    violated and inherited counts and the smallest example of each, by size."""
    size_key = F.struct("members", "partitions", "rounds", "calls", "scenario")
    example = F.struct("members", "partitions", "rounds", "calls", "scenario", "violation",
                       "replay", "inherited")
    aggs = []
    for inv in INVARIANTS:
        violated = F.col(inv) == 1
        labels = F.concat(F.lit(","), F.col("inherited"), F.lit(","))
        inherited = violated & labels.contains(f",{inv}:")
        evidence = violated & labels.contains(f",{inv}:{EVIDENCE},")
        aggs += [F.sum(F.when(violated, 1).otherwise(0)).alias(f"{inv}__violated"),
                 F.sum(F.when(inherited, 1).otherwise(0)).alias(f"{inv}__inherited"),
                 F.sum(F.when(evidence, 1).otherwise(0)).alias(f"{inv}__evidence"),
                 F.min_by(example, F.when(violated & ~inherited, size_key))
                 .alias(f"{inv}__smallest"),
                 F.min_by(example, F.when(inherited, size_key))
                 .alias(f"{inv}__smallest_inherited")]
    return aggs


def _write_counterexample(out: Path, target: str, inv: str, smallest: dict[str, Any],
                          folder: str = "counterexamples",
                          label: LabelEntry | None = None) -> ExampleEntry:
    """Save the replay file of the smallest counterexample; return its summary entry (with
    its ``label``, for an inherited one)."""
    cex_dir = out / folder
    cex_dir.mkdir(parents=True, exist_ok=True)
    name = f"{_safe_name(target)}-{inv}-s{smallest['scenario']}.json"
    record: ChainFile = json.loads(smallest["replay"])
    record["invariant"] = inv
    mine = [v for v in record["violations"] if _invariant_of(v) == inv]
    record["violations"] = mine + [v for v in record["violations"] if v not in mine]
    (cex_dir / name).write_text(steady_text(record), encoding="utf-8")
    return {**(label if label is not None else LabelEntry()),
            "scenario": smallest["scenario"], "members": smallest["members"],
            "partitions": smallest["partitions"], "rounds": smallest["rounds"],
            "violation": mine[0] if mine else smallest["violation"],
            "file": f"{folder}/{name}"}


def _metric(c: dict[str, Any], m: str) -> Metric:
    """One metric of a size bucket's cell (``m``: one of `METRICS`)."""
    p50, p90, p99 = (round(float(v), 6) for v in c[f"{m}_pct"])
    return {"sum": c[f"{m}_sum"], "max": c[f"{m}_max"], "mean": round(c[f"{m}_sum"] / c["rows"], 6),
            "p50": p50, "p90": p90, "p99": p99}


def _size_entry(c: dict[str, Any]) -> SizeEntry:
    return {"members": _bucket_label(c["bucket"]), "scenarios": c["rows"], "calls": c["calls"],
            "kafka_unbalanced": c["kafka_unbalanced"], "moves": _metric(c, "moves"),
            "imbalance": _metric(c, "imbalance"),
            "topic_imbalance": _metric(c, "topic_imbalance"),
            "unowned": _metric(c, "unowned")}


def _write_parquet(out: Path, name: str, rows: Sequence[Mapping[str, object]]) -> None:
    """A small aggregate table, written by the driver, partitioned by target."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = out / "aggregates" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if rows:
        pq.write_to_dataset(pa.Table.from_pylist(rows), str(folder), partition_cols=["target"],
                            basename_template="part-{i}.parquet")


def _invariant_counts(out: Path, targets: list[str], cells: dict[str, list[dict[str, Any]]],
                      violations: dict[str, dict[str, Any]], reference: str | None = None
                      ) -> tuple[dict[str, dict[str, InvariantCount]], Examples, Examples]:
    """Per target × invariant: checked, violated and (of those) inherited, by a rule or
    from the ``reference``'s evidence; the smallest own counterexample and the smallest
    inherited one, each saved as a file."""
    for folder in ("counterexamples", "inherited"):
        shutil.rmtree(out / folder, ignore_errors=True)
    invariants: dict[str, dict[str, InvariantCount]] = {}
    counterexamples: Examples = {}
    inherited: Examples = {}
    for t in targets:
        invariants[t] = {}
        v = violations.get(t, {})
        for inv in INVARIANTS:
            invariants[t][inv] = {
                "checked": sum(int(c[f"{inv}__checked"]) for c in cells[t]),
                "violated": int(v.get(f"{inv}__violated") or 0),
                "inherited": int(v.get(f"{inv}__inherited") or 0),
                "by_evidence": int(v.get(f"{inv}__evidence") or 0)}
            smallest = v.get(f"{inv}__smallest")
            if smallest:
                counterexamples.setdefault(t, {})[inv] = _write_counterexample(
                    out, t, inv, smallest)
            smallest = v.get(f"{inv}__smallest_inherited")
            if smallest:
                rule = dict(p.split(":", 1) for p in smallest["inherited"].split(","))[inv]
                inherited.setdefault(t, {})[inv] = _write_counterexample(
                    out, t, inv, smallest, "inherited", label_entry(rule, reference, t))
    return invariants, counterexamples, inherited


def aggregate(spark: Any, out: Path, config: AuditConfig) -> tuple[AuditSummary, Timings]:
    """Compute the aggregates in two Spark jobs (one cell per target × size bucket over all
    rows; per target over the violating rows), write them as Parquet (partitioned by
    target) and the smallest counterexamples as replay files; return (summary, timings)."""
    from pyspark.sql import functions as F

    targets = list(config.targets)
    rows = _read_rows(spark, out, config).withColumn("bucket", _bucket_column(F))
    collected = rows.groupBy("target", "bucket").agg(*_cell_aggregates(F, targets)).collect()
    cells: dict[str, list[dict[str, Any]]] = {t: [] for t in targets}
    for r in sorted(collected, key=lambda r: (r["target"], r["bucket"])):
        cells.setdefault(r["target"], []).append(r.asDict(recursive=True))
    violations = {r["target"]: r.asDict(recursive=True) for r in
                  rows.filter(F.col("violated")).groupBy("target")
                  .agg(*_violation_aggregates(F)).collect()}
    invariants, counterexamples, inherited = _invariant_counts(out, targets, cells,
                                                               violations, config.reference)
    by_size = {t: [_size_entry(c) for c in cells[t]] for t in targets}
    time_by_size: dict[str, list[SizeTiming]] = {
        t: [{"members": _bucket_label(c["bucket"]), "scenarios": c["rows"],
             "mean_ms": round(c["assign_ms_sum"] / c["rows"], 4),
             "max_ms": round(c["assign_ms_max"], 3),
             "total_ms": round(c["assign_ms_sum"], 1)} for c in cells[t]]
        for t in targets}
    disagreement = {t: {u: sum(int(c[f"differs__{j}"]) for c in cells[t])
                        for j, u in enumerate(targets) if u != t} for t in targets}
    _write_parquet(out, "invariants", [
        {"target": t, "invariant": inv, **counts}
        for t, per in invariants.items() for inv, counts in per.items()])
    _write_parquet(out, "by_size", [
        {"target": t, "members": e["members"], "scenarios": e["scenarios"],
         "calls": e["calls"], "kafka_unbalanced": e["kafka_unbalanced"],
         **{f"{m}_{k}": metric_of(e, m)[k] for m in METRICS
            for k in ("sum", "max", "mean", "p50", "p90", "p99")}}
        for t, entries in by_size.items() for e in entries])
    _write_parquet(out, "disagreement", [
        {"target": t, "other": u, "count": n}
        for t, per in disagreement.items() for u, n in per.items()])
    total_violations = sum(v["violated"] for t in invariants.values() for v in t.values())
    total_inherited = sum(v["inherited"] for t in invariants.values() for v in t.values())
    by_evidence = sum(v["by_evidence"] for t in invariants.values() for v in t.values())
    summary: AuditSummary = {
        "format": SUMMARY_FORMAT,
        "source": ({"corpus": os.path.abspath(config.corpus)} if config.corpus
                   else {"random": {"seed": config.seed}}),
        "scenarios": config.scenarios,
        "chunk_size": config.effective_chunk_size(),
        "chunks": len(config.chunks()),
        "targets": targets,
        "rows": {t: sum(int(c["rows"]) for c in cells[t]) for t in targets},
        "scenarios_per_target": {t: sum(int(c["scenarios"]) for c in cells[t])
                                 for t in targets},
        "invariants": invariants,
        "violations": total_violations,
        "inherited_from_kafka": total_inherited,
        "inherited_by_rule": total_inherited - by_evidence,
        "inherited_by_evidence": by_evidence,
        "reference": config.reference,
        "ok": total_violations == total_inherited,
        "counterexamples": counterexamples,
        "inherited_examples": inherited,
        "kafka_rules": dict(RULES),
        "by_size": by_size,
        "disagreement": disagreement,
    }
    return summary, {"by_size": time_by_size}


def metric_of(entry: SizeEntry, m: str) -> Metric:
    """The metric ``m`` (one of `METRICS`) of a size bucket's entry."""
    return {"moves": entry["moves"], "imbalance": entry["imbalance"],
            "topic_imbalance": entry["topic_imbalance"], "unowned": entry["unowned"]}[m]


def write_summary(out: Path, summary: AuditSummary) -> Path:
    path = out / "summary.json"
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return path
