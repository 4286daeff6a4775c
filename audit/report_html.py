"""The audit's ``index.html``: the invariants table, the smallest counterexamples (and their
pictures), what is inherited from Kafka, the metrics by group size, the disagreement between
targets, and the plots (SVG files beside it, drawn by `charts`)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .chain import INVARIANTS
from .charts import heatmap, line_chart
from .evidence import evidence_note, label_text
from .report import METRICS, metric_of
from .summary_shapes import AuditSummary, ExampleEntry, SizeEntry, SizeTiming, Timings

__all__ = ["CSS", "write_html"]

_PICTURE_KEY = ("<p>Each smallest example (own violations, then Kafka's own), shrunk while it "
               "fails the same way: partitions down, assign calls across (R2·1 is the first "
               "follow-up of the second rebalance), each cell the member that holds the "
               "partition after the call; hatched: withheld from everyone while its owner "
               "revokes it; grey: unowned; red column: where the violation shows.</p>")


def _plots(out: Path, summary: AuditSummary, timings: Timings) -> list[str]:
    """The report's plots as SVG files (``charts.py``): each metric's mean and the assign
    time against group size, one line per target, and the disagreement matrix."""
    targets = summary["targets"]
    files: list[str] = []

    def write(name: str, text: str) -> None:
        (out / name).write_text(text, encoding="utf-8")
        files.append(name)

    def buckets(rows_of: Mapping[str, Sequence[SizeEntry | SizeTiming]]) -> list[str]:
        seen = {r["members"]: _bucket_low(r["members"]) for t in targets
                for r in rows_of.get(t, [])}
        return sorted(seen, key=seen.__getitem__)

    sizes = buckets(summary["by_size"])
    for metric in METRICS:
        label = metric.replace("_", " ")
        write(f"{metric}_vs_size.svg", line_chart(
            f"{label} vs group size", "group size (members)", f"mean {label} per scenario",
            sizes, {t: [(r["members"], metric_of(r, metric)["mean"]) for r in summary["by_size"]
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


def _example_rows(examples: dict[str, dict[str, ExampleEntry]]) -> list[list[Any]]:
    e = html.escape
    return [[e(t), inv + e(label_text(c)), c["scenario"],
             c["members"], c["partitions"], c["rounds"], e(c["violation"] or ""),
             f'<a href="{e(c["file"])}">{e(c["file"])}</a>']
            for t, per in examples.items() for inv, c in per.items()]


def _invariant_rows(summary: AuditSummary) -> list[list[Any]]:
    """Per target: its scenarios, then per invariant violated / checked (and how many of
    the violations are Kafka's own)."""
    e = html.escape
    rows = []
    for t in summary["targets"]:
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
        rows.append(cells)
    return rows


def _size_rows(summary: AuditSummary, timings: Timings) -> list[list[Any]]:
    """Per target and size bucket: the metrics' summaries and the assign time."""
    e = html.escape
    rows = []
    for t in summary["targets"]:
        times = {r["members"]: r["mean_ms"] for r in timings["by_size"].get(t, [])}
        for r in summary["by_size"].get(t, []):
            rows.append([e(t), r["members"], r["scenarios"],
                         f'{r["moves"]["mean"]:.2f} / {r["moves"]["p90"]:g} / '
                         f'{r["moves"]["max"]}',
                         f'{r["imbalance"]["mean"]:.2f} / {r["imbalance"]["max"]}',
                         f'{r["topic_imbalance"]["mean"]:.2f} / '
                         f'{r["topic_imbalance"]["max"]}',
                         f'{r["unowned"]["mean"]:.1f} / {r["unowned"]["max"]}',
                         r["kafka_unbalanced"],
                         f'{times.get(r["members"], 0):.3f}'])
    return rows


def _status(summary: AuditSummary) -> str:
    """The verdict line: own violations, none at all, or only Kafka's own."""
    own = summary["violations"] - summary["inherited_from_kafka"]
    if own:
        return f'<p class="bad">{own} violation(s)</p>'
    if not summary["violations"]:
        return '<p class="ok">every invariant held</p>'
    return (f'<p class="kafka">{summary["violations"]} violation(s), every one Kafka\'s '
            'own behaviour (see below); no other violation</p>')


#: the report's look, shared by the other HTML pages groupcheck writes (the matrix's)
CSS = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
       "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
       ".bad{color:#b00;font-weight:bold}.ok{color:#070}.na{color:#999}"
       ".kafka{color:#a60}"
       "img{max-width:48%;margin:4px}")
_HEAD = ("<!doctype html><html><head><meta charset='utf-8'><title>groupcheck audit</title>"
         f"\n<style>{CSS}</style></head><body>")
_EXAMPLE_HEADER = ["target", "invariant", "scenario", "members", "partitions", "rounds",
                   "violation", "replay file"]


def write_html(out: Path, summary: AuditSummary, timings: Timings,
               figures: list[str] | None = None) -> Path:
    """``index.html``; ``figures``: the examples' pictures (``examples.shrink_and_draw``)."""
    plots = _plots(out, summary, timings)
    targets = summary["targets"]
    e = html.escape
    cex_rows = _example_rows(summary["counterexamples"])
    kafka_rows = _example_rows(summary["inherited_examples"])
    rule_rows = [[e(rule), e(text)] for rule, text in summary["kafka_rules"].items()]
    dis_rows: list[list[Any]] = [
        [e(t)] + [("—" if u == t else summary["disagreement"][t].get(u, 0)) for u in targets]
        for t in targets]
    source = e(json.dumps(summary["source"]))
    parts = [
        _HEAD,
        "<h1>groupcheck audit</h1>",
        f"<p>{summary['scenarios']:,} scenarios ({source}), targets: "
        f"{e(', '.join(targets))}; {timings.get('chunks_run', 0)} chunk(s) run in this "
        f"session, {timings.get('chunks_seconds', 0):.1f}s for them, "
        f"{timings.get('aggregate_seconds', 0):.1f}s for the aggregates</p>",
        _status(summary),
        "<h2>Invariants (violated / checked scenarios)</h2>",
        _table(["target", "scenarios", *INVARIANTS], _invariant_rows(summary)),
        "<h2>Smallest counterexamples</h2>",
        _table(_EXAMPLE_HEADER, cex_rows) if cex_rows else "<p>none</p>",
        "<h2>The examples, shrunk and drawn</h2>" + _PICTURE_KEY if figures else "",
        "".join(figures or []),
        "<h2>Inherited from Kafka</h2>",
        "<p>Violations that Kafka's own client commits and the target reproduces on purpose. "
        "They are counted above and fail the run only with <code>--strict</code>. A "
        "violation is classified by a rule, never by a list of scenarios, or by evidence: "
        f"{e(evidence_note(summary))}</p>",
        _table(["rule", "what Kafka does"], rule_rows),
        _table(_EXAMPLE_HEADER, kafka_rows) if kafka_rows else "<p>none</p>",
        "<h2>By group size</h2>",
        _table(["target", "members", "scenarios", "moves mean / p90 / max",
                "imbalance mean / max", "per-topic imbalance mean / max",
                "unowned mean / max", "not Kafka-balanced", "assign ms / scenario"],
               _size_rows(summary, timings)),
        "<h2>Disagreement (scenarios whose first rebalance differs)</h2>",
        _table(["target", *targets], dis_rows) if len(targets) > 1 else "<p>one target</p>",
        "<h2>Plots</h2>",
        "".join(f'<img src="{e(p)}" alt="{e(p)}">' for p in plots),
        "</body></html>",
    ]
    path = out / "index.html"
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path
