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

from .chain import INVARIANTS

if TYPE_CHECKING:
    from .pipeline import AuditConfig

SUMMARY_FORMAT = "groupcheck-audit-summary/1"
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
    paths = [str(results / f"chunk={i:05d}") for i, _, _ in config.chunks()]
    return spark.read.option("basePath", str(results)).parquet(*paths)


def aggregate(spark: Any, out: Path, config: AuditConfig
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Compute the aggregates in Spark, write them as Parquet (partitioned by target) and
    the smallest counterexamples as replay files; return (summary, timings)."""
    from pyspark.sql import functions as F

    rows = read_rows(spark, out, config).withColumn("bucket", _bucket_column(F))
    rows.cache()
    targets = list(config.targets)

    # per target × invariant: checked and violated; and the smallest counterexample
    size_key = F.struct("members", "partitions", "rounds", "calls", "scenario")
    aggs = [F.count("*").alias("rows"), F.countDistinct("scenario").alias("scenarios")]
    for inv in INVARIANTS:
        aggs.append(F.count(F.col(inv)).alias(f"{inv}__checked"))
        aggs.append(F.sum(F.when(F.col(inv) == 1, 1).otherwise(0)).alias(f"{inv}__violated"))
        aggs.append(F.min_by(F.struct("scenario", "members", "partitions", "rounds",
                                      "violation", "replay"),
                             F.when(F.col(inv) == 1, size_key)).alias(f"{inv}__smallest"))
    per_target = {r["target"]: r.asDict(recursive=True)
                  for r in rows.groupBy("target").agg(*aggs).collect()}

    invariants: dict[str, dict[str, dict[str, int]]] = {}
    counterexamples: dict[str, dict[str, Any]] = {}
    cex_dir = out / "counterexamples"
    shutil.rmtree(cex_dir, ignore_errors=True)
    long_rows: list[tuple[str, str, int, int]] = []
    for t in targets:
        r = per_target.get(t, {})
        invariants[t] = {}
        for inv in INVARIANTS:
            checked, violated = int(r.get(f"{inv}__checked") or 0), int(
                r.get(f"{inv}__violated") or 0)
            invariants[t][inv] = {"checked": checked, "violated": violated}
            long_rows.append((t, inv, checked, violated))
            smallest = r.get(f"{inv}__smallest")
            if violated and smallest:
                cex_dir.mkdir(parents=True, exist_ok=True)
                name = f"{safe_name(t)}-{inv}-s{smallest['scenario']}.json"
                record = json.loads(smallest["replay"])
                record["invariant"] = inv
                mine = [v for v in record["violations"] if _invariant_of(v) == inv]
                record["violations"] = mine + [v for v in record["violations"]
                                               if v not in mine]
                (cex_dir / name).write_text(json.dumps(record, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")
                counterexamples.setdefault(t, {})[inv] = {
                    "scenario": smallest["scenario"], "members": smallest["members"],
                    "partitions": smallest["partitions"], "rounds": smallest["rounds"],
                    "violation": mine[0] if mine else smallest["violation"],
                    "file": f"counterexamples/{name}"}
    spark.createDataFrame(long_rows, "target string, invariant string, checked long, "
                                     "violated long") \
        .coalesce(1).write.mode("overwrite").partitionBy("target") \
        .parquet(str(out / "aggregates" / "invariants"))

    # distributions vs group size
    size_aggs = [F.count("*").alias("scenarios"), F.sum("calls").alias("calls"),
                 F.sum(F.when(~F.col("kafka_balanced"), 1).otherwise(0)).alias(
                     "kafka_unbalanced"),
                 F.sum("assign_ms").alias("assign_ms_sum"),
                 F.max("assign_ms").alias("assign_ms_max")]
    for m in METRICS:
        size_aggs += [F.sum(m).alias(f"{m}_sum"), F.max(m).alias(f"{m}_max"),
                      F.expr(f"percentile({m}, array(0.5, 0.9, 0.99))").alias(f"{m}_pct")]
    by_size_df = rows.groupBy("target", "bucket").agg(*size_aggs)
    by_size_df.coalesce(1).write.mode("overwrite").partitionBy("target") \
        .parquet(str(out / "aggregates" / "by_size"))
    by_size: dict[str, list[dict[str, Any]]] = {t: [] for t in targets}
    time_by_size: dict[str, list[dict[str, Any]]] = {t: [] for t in targets}
    for r in sorted(by_size_df.collect(), key=lambda r: (r["target"], r["bucket"])):
        entry: dict[str, Any] = {"members": bucket_label(r["bucket"]),
                                 "scenarios": r["scenarios"], "calls": r["calls"],
                                 "kafka_unbalanced": r["kafka_unbalanced"]}
        for m in METRICS:
            p50, p90, p99 = (round(float(v), 6) for v in r[f"{m}_pct"])
            entry[m] = {"sum": r[f"{m}_sum"], "max": r[f"{m}_max"],
                        "mean": round(r[f"{m}_sum"] / r["scenarios"], 6),
                        "p50": p50, "p90": p90, "p99": p99}
        by_size.setdefault(r["target"], []).append(entry)
        time_by_size.setdefault(r["target"], []).append(
            {"members": entry["members"], "scenarios": r["scenarios"],
             "mean_ms": round(r["assign_ms_sum"] / r["scenarios"], 4),
             "max_ms": round(r["assign_ms_max"], 3), "total_ms": round(r["assign_ms_sum"], 1)})

    # disagreement: scenarios where two targets' first rebalances differ
    dis = (rows.filter(F.col("differs_from") != "")
           .select("target", F.explode(F.split("differs_from", ",")).alias("other"))
           .groupBy("target", "other").count())
    dis.coalesce(1).write.mode("overwrite").partitionBy("target") \
        .parquet(str(out / "aggregates" / "disagreement"))
    disagreement: dict[str, dict[str, int]] = {
        t: {u: 0 for u in targets if u != t} for t in targets}
    for r in dis.collect():
        disagreement.setdefault(r["target"], {})[r["other"]] = int(r["count"])
    rows.unpersist()

    total_violations = sum(v["violated"] for t in invariants.values() for v in t.values())
    summary: dict[str, Any] = {
        "format": SUMMARY_FORMAT,
        "source": ({"corpus": os.path.abspath(config.corpus)} if config.corpus
                   else {"random": {"seed": config.seed}}),
        "scenarios": config.scenarios,
        "chunk_size": config.effective_chunk_size(),
        "chunks": len(config.chunks()),
        "targets": targets,
        "rows": {t: int(per_target.get(t, {}).get("rows") or 0) for t in targets},
        "scenarios_per_target": {t: int(per_target.get(t, {}).get("scenarios") or 0)
                                 for t in targets},
        "invariants": invariants,
        "violations": total_violations,
        "ok": total_violations == 0,
        "counterexamples": counterexamples,
        "by_size": by_size,
        "disagreement": disagreement,
    }
    timings = {"by_size": time_by_size}
    return summary, timings


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files: list[str] = []
    targets = summary["targets"]

    def series(metric: str, key: str = "mean") -> None:
        fig, ax = plt.subplots(figsize=(7, 4))
        for t in targets:
            rows = summary["by_size"].get(t, [])
            ax.plot([r["members"] for r in rows], [r[metric][key] for r in rows],
                    marker="o", label=t)
        ax.set_xlabel("group size (members)")
        ax.set_ylabel(f"{key} {metric.replace('_', ' ')} per scenario")
        ax.set_title(f"{metric.replace('_', ' ')} vs group size")
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{metric}_vs_size.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        files.append(name)

    for metric in METRICS:
        series(metric)
    fig, ax = plt.subplots(figsize=(7, 4))
    for t in targets:
        rows = timings["by_size"].get(t, [])
        ax.plot([r["members"] for r in rows], [r["mean_ms"] for r in rows], marker="o", label=t)
    ax.set_yscale("log")
    ax.set_xlabel("group size (members)")
    ax.set_ylabel("assign time per scenario (ms)")
    ax.set_title("time vs group size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "time_vs_size.png", dpi=90)
    plt.close(fig)
    files.append("time_vs_size.png")
    if len(targets) >= 2:
        n = len(targets)
        matrix = [[0.0] * n for _ in range(n)]
        for i, t in enumerate(targets):
            total = max(1, summary["scenarios_per_target"][t])
            for j, u in enumerate(targets):
                if i != j:
                    matrix[i][j] = summary["disagreement"][t].get(u, 0) / total
        fig, ax = plt.subplots(figsize=(1.6 * n + 2, 1.3 * n + 1.5))
        image = ax.imshow(matrix, vmin=0, vmax=1, cmap="Reds")
        ax.set_xticks(range(n), targets, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(n), targets, fontsize=8)
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{matrix[i][j]:.2f}", ha="center", va="center", fontsize=8)
        ax.set_title("share of scenarios whose first rebalance differs")
        fig.colorbar(image)
        fig.tight_layout()
        fig.savefig(out / "disagreement.png", dpi=90)
        plt.close(fig)
        files.append("disagreement.png")
    return files


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def write_html(out: Path, summary: dict[str, Any], timings: dict[str, Any]) -> Path:
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
            elif c["violated"]:
                cells.append(f'<span class="bad">{c["violated"]} / {c["checked"]}</span>')
            else:
                cells.append(f'<span class="ok">0 / {c["checked"]}</span>')
        inv_rows.append(cells)
    cex_rows = [[e(t), inv, c["scenario"], c["members"], c["partitions"], c["rounds"],
                 e(c["violation"] or ""), f'<a href="{e(c["file"])}">{e(c["file"])}</a>']
                for t, per in summary["counterexamples"].items() for inv, c in per.items()]
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
    status = ('<p class="ok">every invariant held</p>' if summary["ok"] else
              f'<p class="bad">{summary["violations"]} violation(s)</p>')
    source = e(json.dumps(summary["source"]))
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>groupcheck audit</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
        "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
        ".bad{color:#b00;font-weight:bold}.ok{color:#070}.na{color:#999}"
        "img{max-width:48%;margin:4px}</style></head><body>",
        "<h1>groupcheck audit</h1>",
        f"<p>{summary['scenarios']:,} scenarios ({source}), targets: "
        f"{e(', '.join(targets))}; wall time {timings.get('wall_seconds', 0):.1f}s</p>",
        status,
        "<h2>Invariants (violated / checked scenarios)</h2>",
        _table(["target", "scenarios", *INVARIANTS], inv_rows),
        "<h2>Smallest counterexamples</h2>",
        _table(["target", "invariant", "scenario", "members", "partitions", "rounds",
                "violation", "replay file"], cex_rows) if cex_rows else "<p>none</p>",
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
