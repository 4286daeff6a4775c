"""The JSON shapes of an audit's outputs: a counterexample's replay file (the story and the
chain of requests it produced), ``summary.json`` (counts and exact statistics, the same
bytes for a seed) and ``timings.json`` (what took how long, and what shrinking did).

`chain.replay_record` makes the first, `report.aggregate` the others; `report_html` and
`examples` read them; docs/reference/file-formats.md describes every field.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ..model.story_shapes import StorySpec
from ..properties.jsonl_shapes import Answered, AssignRequest
from .scenarios import SpecSize

__all__ = ["AuditSummary", "ChainFile", "ChainRecord", "ChainRound", "ExampleEntry",
           "InvariantCount", "LabelEntry", "Metric", "ShrinkDone", "SizeEntry", "SizeTiming",
           "Source", "Timings"]


class InvariantCount(TypedDict):
    """One invariant of one target: scenarios that judged it, violated it, and of those the
    ones Kafka's own behaviour explains (by a rule or by the reference's evidence)."""

    checked: int
    violated: int
    inherited: int
    by_evidence: int


class LabelEntry(TypedDict, total=False):
    """Where a label came from: a rule (``rule``) or the reference (``reference``)."""

    label: str
    rule: str
    reference: str


class ExampleEntry(LabelEntry):
    """The smallest example of one target and invariant, and its replay file."""

    scenario: int
    members: int
    partitions: int
    rounds: int
    violation: str | None
    file: str


class Metric(TypedDict):
    """A metric's sum, maximum, mean and percentiles over a size bucket's scenarios."""

    sum: int
    max: int
    mean: float
    p50: float
    p90: float
    p99: float


class SizeEntry(TypedDict):
    """One size bucket of one target (``members``: the bucket's label, ``"4-7"``)."""

    members: str
    scenarios: int
    calls: int
    kafka_unbalanced: int
    moves: Metric
    imbalance: Metric
    topic_imbalance: Metric
    unowned: Metric


class RandomSource(TypedDict):
    seed: int | None


class Source(TypedDict, total=False):
    """What the audit played: a corpus folder, or the random scenarios of a seed."""

    corpus: str
    random: RandomSource


class AuditSummary(TypedDict):
    """``summary.json`` (``groupcheck-audit-summary/1``)."""

    format: str
    source: Source
    scenarios: int
    chunk_size: int
    chunks: int
    targets: list[str]
    rows: dict[str, int]
    scenarios_per_target: dict[str, int]
    invariants: dict[str, dict[str, InvariantCount]]
    violations: int
    inherited_from_kafka: int
    inherited_by_rule: int
    inherited_by_evidence: int
    reference: str | None
    ok: bool
    counterexamples: dict[str, dict[str, ExampleEntry]]
    inherited_examples: dict[str, dict[str, ExampleEntry]]
    kafka_rules: dict[str, str]
    by_size: dict[str, list[SizeEntry]]
    disagreement: dict[str, dict[str, int]]


class SizeTiming(TypedDict):
    """Assign time per scenario of one size bucket of one target."""

    members: str
    scenarios: int
    mean_ms: float
    max_ms: float
    total_ms: float


#: what shrinking one example did (`story_shrink.ShrinkResult.summary`), the file it wrote,
#: or why it could not shrink
ShrinkDone = TypedDict("ShrinkDone", {
    "failure": str, "from": SpecSize, "to": SpecSize, "runs": int, "seconds": float,
    "complete": bool, "renamed": bool, "file": str, "error": str}, total=False)


class Timings(TypedDict):
    """``timings.json``: the assign time by size, how long each phase took, and what
    shrinking did per example file."""

    by_size: dict[str, list[SizeTiming]]
    chunks_seconds: NotRequired[float]
    aggregate_seconds: NotRequired[float]
    chunks_run: NotRequired[int]
    shrink: NotRequired[dict[str, ShrinkDone]]
    wall_seconds: NotRequired[float]


class ChainRound(TypedDict):
    """One assign call of a chain: its request, its answer (or why there is none) and which
    follow-up of its rebalance it is (0: the rebalance's first call)."""

    request: AssignRequest
    response: Answered
    follow_up: int


class ChainRecord(TypedDict):
    """An audit counterexample (``groupcheck-audit-chain/1``): the story and the chain of
    requests it produced, what broke first, where, and what Kafka's rules explain."""

    format: str
    target: str
    assignor: str
    seed: int | None
    scenario: int
    invariant: str
    violations: list[str]
    inherited_from_kafka: dict[str, str]
    spec: StorySpec
    requests: list[AssignRequest]
    responses: list[Answered]
    follow_ups: list[int]
    violated_at: dict[str, int]


class ChainFile(ChainRecord, total=False):
    """A counterexample as saved: an engine's record adds which engine found it and how it
    was shrunk."""

    engine: str
    shrink: ShrinkDone
