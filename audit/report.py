"""Aggregates of an audit's rows, ``summary.json``, counterexample files and ``index.html``.

Everything in ``summary.json`` is an integer count or exact statistic of integer columns,
written with sorted keys, so the same seed gives the same bytes whatever the master, the
number of partitions or the order in which chunks ran. Timings live in ``timings.json`` and
in the HTML report only.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..properties.kafka_rules import RULES
from .chain import INVARIANTS
from .charts import heatmap, line_chart
from .evidence import EVIDENCE, evidence_note, label_entry, label_text

if TYPE_CHECKING:
    from .pipeline import AuditConfig

SUMMARY_FORMAT = "groupcheck-audit-summary/1"
PICTURE_KEY = ("<p>Each smallest example (own violations, then Kafka's own), shrunk while it "
               "fails the same way: partitions down, assign calls across (R2·1 is the first "
               "follow-up of the second rebalance), each cell the member that holds the "
               "partition after the call; hatched: withheld from everyone while its owner "
               "revokes it; grey: unowned; red column: where the violation shows.</p>")
BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128)
METRICS = ("moves", "imbalance", "topic_imbalance", "unowned")


def _invariant_of(violation: str) -> str:
    """``"I4a: ..."`` → ``I4``; ``"TIMEOUT: ..."`` → ``TIMEOUT``."""
    head = violation.split(":", 1)[0]
    return head.rstrip("ab") if head.startswith("I") else head


def bucket_label(low: int) -> str:
    i = BUCKETS.index(low)
    high = BUCKETS[i + 1] - 1 if i + 1 < len(BUCKETS) else 200
    return str(low) if high == low else f"{low}-{high}"


def safe_name(target: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", target).strip("-")


def _bucket_column(F: Any) -> Any:
    col = F.lit(BUCKETS[0])
    for low in BUCKETS[1:]:
        col = F.when(F.col("members") >= low, F.lit(low)).otherwise(col)
    return col


def read_rows(spark: Any, out: Path, config: AuditConfig) -> Any:
    """Every per-scenario row of the finished chunks (one folder per chunk)."""
    results = out / "results"
    from pyspark.sql.types import IntegerType, StructField

    from .pipeline import _spark, result_schema

    schema = _spark(result_schema())  # given, so Spark need not read footers to infer it
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
                          folder: str = "counterexamples") -> dict[str, Any]:
    """Save the replay file of the smallest counterexample; return its summary entry."""
    cex_dir = out / folder
    cex_dir.mkdir(parents=True, exist_ok=True)
    name = f"{safe_name(target)}-{inv}-s{smallest['scenario']}.json"
    record = json.loads(smallest["replay"])
    record["invariant"] = inv
    mine = [v for v in record["violations"] if _invariant_of(v) == inv]
    record["violations"] = mine + [v for v in record["violations"] if v not in mine]
    (cex_dir / name).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    return {"scenario": smallest["scenario"], "members": smallest["members"],
            "partitions": smallest["partitions"], "rounds": smallest["rounds"],
            "violation": mine[0] if mine else smallest["violation"],
            "file": f"{folder}/{name}"}


def _size_entry(c: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"members": bucket_label(c["bucket"]), "scenarios": c["rows"],
                             "calls": c["calls"], "kafka_unbalanced": c["kafka_unbalanced"]}
    for m in METRICS:
        p50, p90, p99 = (round(float(v), 6) for v in c[f"{m}_pct"])
        entry[m] = {"sum": c[f"{m}_sum"], "max": c[f"{m}_max"],
                    "mean": round(c[f"{m}_sum"] / c["rows"], 6),
                    "p50": p50, "p90": p90, "p99": p99}
    return entry


def _write_parquet(out: Path, name: str, rows: list[dict[str, Any]]) -> None:
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
                      ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Per target × invariant: checked, violated and (of those) inherited, by a rule or
    from the ``reference``'s evidence; the smallest own counterexample and the smallest
    inherited one, each saved as a file."""
    for folder in ("counterexamples", "inherited"):
        shutil.rmtree(out / folder, ignore_errors=True)
    invariants: dict[str, dict[str, dict[str, int]]] = {}
    counterexamples: dict[str, dict[str, Any]] = {}
    inherited: dict[str, dict[str, Any]] = {}
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
                entry = _write_counterexample(out, t, inv, smallest, "inherited")
                rule = dict(p.split(":", 1) for p in smallest["inherited"].split(","))[inv]
                entry.update(label_entry(rule, reference, t))
                inherited.setdefault(t, {})[inv] = entry
    return invariants, counterexamples, inherited


def aggregate(spark: Any, out: Path, config: AuditConfig
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Compute the aggregates in two Spark jobs (one cell per target × size bucket over all
    rows; per target over the violating rows), write them as Parquet (partitioned by
    target) and the smallest counterexamples as replay files; return (summary, timings)."""
    from pyspark.sql import functions as F

    targets = list(config.targets)
    rows = read_rows(spark, out, config).withColumn("bucket", _bucket_column(F))
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
    time_by_size = {t: [{"members": bucket_label(c["bucket"]), "scenarios": c["rows"],
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
         **{f"{m}_{k}": e[m][k] for m in METRICS for k in ("sum", "max", "mean", "p50",
                                                             "p90", "p99")}}
        for t, entries in by_size.items() for e in entries])
    _write_parquet(out, "disagreement", [
        {"target": t, "other": u, "count": n}
        for t, per in disagreement.items() for u, n in per.items()])
    total_violations = sum(v["violated"] for t in invariants.values() for v in t.values())
    total_inherited = sum(v["inherited"] for t in invariants.values() for v in t.values())
    by_evidence = sum(v["by_evidence"] for t in invariants.values() for v in t.values())
    summary: dict[str, Any] = {
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


def write_summary(out: Path, summary: dict[str, Any]) -> Path:
    path = out / "summary.json"
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------------------
# HTML


def _plots(out: Path, summary: dict[str, Any], timings: dict[str, Any]) -> list[str]:
    """The report's plots as SVG files (``charts.py``): each metric's mean and the assign
    time against group size, one line per target, and the disagreement matrix."""
    targets = summary["targets"]
    files: list[str] = []

    def write(name: str, text: str) -> None:
        (out / name).write_text(text, encoding="utf-8")
        files.append(name)

    def buckets(rows_of: dict[str, list[dict[str, Any]]]) -> list[str]:
        seen = {r["members"]: _bucket_low(r["members"]) for t in targets
                for r in rows_of.get(t, [])}
        return sorted(seen, key=seen.__getitem__)

    sizes = buckets(summary["by_size"])
    for metric in METRICS:
        label = metric.replace("_", " ")
        write(f"{metric}_vs_size.svg", line_chart(
            f"{label} vs group size", "group size (members)", f"mean {label} per scenario",
            sizes, {t: [(r["members"], r[metric]["mean"]) for r in summary["by_size"]
                        .get(t, [])] for t in targets}))
    write("time_vs_size.svg", line_chart(
        "time vs group size", "group size (members)", "assign time per scenario (ms)",
        buckets(timings["by_size"]),
        {t: [(r["members"], r["mean_ms"]) for r in timings["by_size"].get(t, [])]
         for t in targets}, log=True))
    if len(targets) >= 2:
        matrix = [[0.0 if t == u else summary["disagreement"][t].get(u, 0)
                   / max(1, summary["scenarios_per_target"][t]) for u in targets]
                  for t in targets]
        write("disagreement.svg", heatmap("share of scenarios whose first rebalance differs",
                                          targets, matrix))
    return files


def _bucket_low(label: str) -> int:
    """The smallest group size of a bucket label (``bucket_label``'s ``"4-7"`` → 4)."""
    return int(str(label).split("-")[0])


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _example_rows(examples: dict[str, dict[str, Any]]) -> list[list[Any]]:
    e = html.escape
    return [[e(t), inv + e(label_text(c)), c["scenario"],
             c["members"], c["partitions"], c["rounds"], e(c["violation"] or ""),
             f'<a href="{e(c["file"])}">{e(c["file"])}</a>']
            for t, per in examples.items() for inv, c in per.items()]


def write_html(out: Path, summary: dict[str, Any], timings: dict[str, Any],
               figures: list[str] | None = None) -> Path:
    """``index.html``; ``figures``: the examples' pictures (``examples.shrink_and_draw``)."""
    plots = _plots(out, summary, timings)
    targets = summary["targets"]
    e = html.escape
    inv_rows = []
    for t in targets:
        cells: list[Any] = [e(t), summary["scenarios_per_target"][t]]
        for inv in INVARIANTS:
            c = summary["invariants"][t][inv]
            if not c["checked"]:
                cells.append('<span class="na">n/a</span>')
            elif c["violated"] and c["violated"] == c["inherited"]:
                cells.append(f'<span class="kafka">{c["violated"]} / {c["checked"]} '
                             '(as Kafka)</span>')
            elif c["violated"]:
                extra = f' ({c["inherited"]} as Kafka)' if c["inherited"] else ""
                cells.append(f'<span class="bad">{c["violated"]} / {c["checked"]}'
                             f'{extra}</span>')
            else:
                cells.append(f'<span class="ok">0 / {c["checked"]}</span>')
        inv_rows.append(cells)
    cex_rows = _example_rows(summary["counterexamples"])
    kafka_rows = _example_rows(summary["inherited_examples"])
    rule_rows = [[e(rule), e(text)] for rule, text in summary["kafka_rules"].items()]
    size_rows = []
    for t in targets:
        times = {r["members"]: r for r in timings["by_size"].get(t, [])}
        for r in summary["by_size"].get(t, []):
            size_rows.append([e(t), r["members"], r["scenarios"],
                              f'{r["moves"]["mean"]:.2f} / {r["moves"]["p90"]:g} / '
                              f'{r["moves"]["max"]}',
                              f'{r["imbalance"]["mean"]:.2f} / {r["imbalance"]["max"]}',
                              f'{r["topic_imbalance"]["mean"]:.2f} / '
                              f'{r["topic_imbalance"]["max"]}',
                              f'{r["unowned"]["mean"]:.1f} / {r["unowned"]["max"]}',
                              r["kafka_unbalanced"],
                              f'{times.get(r["members"], {}).get("mean_ms", 0):.3f}'])
    dis_rows = [[e(t)] + [("—" if u == t else summary["disagreement"][t].get(u, 0))
                          for u in targets] for t in targets]
    own = summary["violations"] - summary["inherited_from_kafka"]
    status = (f'<p class="bad">{own} violation(s)</p>' if own else
              '<p class="ok">every invariant held</p>' if not summary["violations"] else
              f'<p class="kafka">{summary["violations"]} violation(s), every one Kafka\'s '
              'own behaviour (see below); no other violation</p>')
    source = e(json.dumps(summary["source"]))
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>groupcheck audit</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        ".bad{color:#b00;font-weight:bold}.ok{color:#070}.na{color:#999}"
        ".kafka{color:#a60}"
        "img{max-width:48%;margin:4px}</style></head><body>",
        "<h1>groupcheck audit</h1>",
        f"<p>{summary['scenarios']:,} scenarios ({source}), targets: "
        f"{e(', '.join(targets))}; {timings.get('chunks_run', 0)} chunk(s) run in this "
        f"session, {timings.get('chunks_seconds', 0):.1f}s for them, "
        f"{timings.get('aggregate_seconds', 0):.1f}s for the aggregates</p>",
        status,
        "<h2>Invariants (violated / checked scenarios)</h2>",
        _table(["target", "scenarios", *INVARIANTS], inv_rows),
        "<h2>Smallest counterexamples</h2>",
        _table(["target", "invariant", "scenario", "members", "partitions", "rounds",
                "violation", "replay file"], cex_rows) if cex_rows else "<p>none</p>",
        "<h2>The examples, shrunk and drawn</h2>" + PICTURE_KEY if figures else "",
        "".join(figures or []),
        "<h2>Inherited from Kafka</h2>",
        "<p>Violations that Kafka's own client commits and the target reproduces on purpose. "
        "They are counted above and fail the run only with <code>--strict</code>. A "
        "violation is classified by a rule, never by a list of scenarios, or by evidence: "
        f"{e(evidence_note(summary))}</p>",
        _table(["rule", "what Kafka does"], rule_rows),
        _table(["target", "invariant", "scenario", "members", "partitions", "rounds",
                "violation", "replay file"], kafka_rows) if kafka_rows else "<p>none</p>",
        "<h2>By group size</h2>",
        _table(["target", "members", "scenarios", "moves mean / p90 / max",
                "imbalance mean / max", "per-topic imbalance mean / max",
                "unowned mean / max", "not Kafka-balanced", "assign ms / scenario"],
               size_rows),
        "<h2>Disagreement (scenarios whose first rebalance differs)</h2>",
        _table(["target", *targets], dis_rows) if len(targets) > 1 else "<p>one target</p>",
        "<h2>Plots</h2>",
        "".join(f'<img src="{e(p)}" alt="{e(p)}">' for p in plots),
        "</body></html>",
    ]
    path = out / "index.html"
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
