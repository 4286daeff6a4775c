"""The differential run of the default suite: each builtin assignor against Kafka's own
client (``java:``) on the audit's seeded stories, every request of every chain given to both,
and every difference that no deviation D1–D4 explains a failure with its request saved.

The bounded run here is a few hundred stories per assignor (seed 0); ``tox -e differential``
runs 100,000 (BENCHMARKS.md). Without a JDK or Kafka's jars the Java tests are skipped with
the reason (CI sets GROUPCHECK_REQUIRE_KAFKA, which makes that a failure).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.engines.differential.reports import save_differences, story_report
from groupcheck.engines.differential.search import builtin_answer
from groupcheck.engines.differential.stories import (
    PairedAssign,
    StoriesResult,
    run_chunk,
    run_stories,
)

from helpers.environment import SETTINGS
from helpers.kafka_java import java_command

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
GROUPS = 1500  # per assignor (ids 0-1499 hold two of the largest tier)
#: shapes of the audit's stories that the bounded run must reach
SHAPES = ("racks", "static members", "unequal subscriptions", "empty subscription",
          "topic without metadata", "previous assignment", "stale claims",
          "conflicting claims", "chain of rebalances", "members stall and return",
          "topics grow or vanish", "tier 1", "tier 2", "tier 3")
DATA = Path(__file__).resolve().parent / "data" / "fidelity"


@pytest.fixture(scope="module")
def kafka() -> str:
    java_command()  # skips (or fails under GROUPCHECK_REQUIRE_KAFKA) without Java
    return "java:"


def _unexplained(result: StoriesResult, saved: list[str]) -> str:
    lines = story_report(result, f"builtin:{result.assignor}", "java:", 1)
    lines += [f"saved: {p}" for p in saved]
    lines += [json.dumps(d.request) for d in result.unexplained[:3]]
    return "\n".join(lines)


#: the default run's: cooperative-sticky, whose answers hang on owned partitions and
#: generations (range's, roundrobin's and sticky's, which the golden vectors also pin, are
#: tox -e heavy's)
DEFAULT_ASSIGNORS = ("cooperative-sticky",)


@pytest.mark.parametrize("assignor", [
    pytest.param(a, marks=[] if a in DEFAULT_ASSIGNORS else [pytest.mark.heavy])
    for a in ASSIGNORS])
def test_builtin_answers_every_story_request_as_kafkas_client_does(
        kafka: str, assignor: str, tmp_path: Path) -> None:
    """Equal answers list for list on every request of every chain, or a difference one of
    D1-D4 explains; and the run reached every shape of group the audit makes."""
    result = run_stories(f"builtin:{assignor}", kafka, assignor, groups=GROUPS, seed=0,
                         settings=SETTINGS)
    saved = save_differences(result, f"builtin:{assignor}", kafka, str(tmp_path))
    assert result.unexplained_count == 0, _unexplained(result, saved)
    assert result.groups == GROUPS and result.requests > GROUPS
    if assignor == "cooperative-sticky":
        assert result.shapes["follow-up rebalances"] > 0
    assert [s for s in SHAPES if not result.shapes[s]] == []


def test_an_assignor_that_differs_from_kafka_is_caught_and_its_request_replays(
        kafka: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A zoo mutant whose balance check counts members wrongly keeps I1 and I2, so only the
    comparison with Kafka's answers can catch it; the saved request runs again with
    ``groupcheck diff --request`` (and the builtin agrees with Kafka there)."""
    mutant = "mutant:sticky-isbalanced-consumer-count"
    result = run_stories(mutant, kafka, "sticky", groups=150, seed=0, settings=SETTINGS)
    assert result.unexplained_count > 0
    first = result.unexplained[0]
    assert "keeps I1 and I2" in first.explanation.why
    path = save_differences(result, mutant, kafka, str(tmp_path))[0]
    capsys.readouterr()
    assert main(["diff", "--target", mutant, "--target", kafka, "--request", path]) == 1
    assert "DISAGREE" in capsys.readouterr().out
    assert main(["diff", "--target", "builtin:sticky", "--target", kafka,
                 "--request", path]) == 0


def test_two_workers_find_what_one_finds(kafka: str) -> None:
    """Chunks merge in scenario order: the figures do not depend on the worker count."""
    one = run_stories("builtin:sticky", kafka, "sticky", groups=200, start=2500, settings=SETTINGS)
    two = run_stories("builtin:sticky", kafka, "sticky", groups=200, start=2500, workers=2,
                      settings=SETTINGS)
    for result in (one, two):
        result.seconds = 0.0
    assert (one.groups, one.requests, one.explained, one.shapes, one.unexplained_count) == \
        (two.groups, two.requests, two.explained, two.shapes, two.unexplained_count)
    assert {k: (d.scenario, d.call) for k, d in one.examples.items()} == \
        {k: (d.scenario, d.call) for k, d in two.examples.items()}


def test_diff_stories_command_reports_and_exits_0_on_agreement(
        kafka: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--target", "builtin:range", "--target", kafka, "--stories", "60",
                 "--failures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "builtin:range vs java:, range: 60 stories (seed 0, ids 0-59)" in out
    assert "unexplained 0" in out and "shapes:" in out


def test_the_fixed_fidelity_differences_answer_as_kafka_recorded(kafka: str) -> None:
    """Requests on which the differential run found groupcheck answering otherwise than
    Kafka (each fixed in impl/): Kafka's client still gives the recorded answer."""
    from groupcheck.engines.differential.search import answer_fn

    from helpers.environment import resolve

    target = resolve(kafka, assignor="sticky", timeout=30)
    try:
        for path in sorted(DATA.glob("*.json")):
            body = json.loads(path.read_text(encoding="utf-8"))
            notes = body.pop("groupcheck")
            if "story" in body:
                got, _ = answer_fn(target)(_story_request(body["story"]))
                assert _digest(got) == notes["kafka_sha256"], path.name
            else:
                got, _ = answer_fn(target)(body)
                assert got["assignment"] == notes["kafka"]["assignment"], path.name
    finally:
        target.close()


# --- without Java: the fixed differences and the pairing itself ----------------------------


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json")), ids=lambda p: p.stem)
def test_a_fixed_fidelity_difference_answers_as_kafka_list_for_list(path: Path) -> None:
    """Regression: each request on which the differential run once found groupcheck
    answering otherwise than Kafka's client gets Kafka's recorded answer exactly."""
    from groupcheck.properties.deviations import same_answer

    body = json.loads(path.read_text(encoding="utf-8"))
    notes = body.pop("groupcheck")
    if "story" in body:  # a story's request, rebuilt; Kafka's answer kept as a digest
        ours, _ = builtin_answer(_story_request(body["story"]))
        assert _digest(ours) == notes["kafka_sha256"]
        return
    ours, _ = builtin_answer(body)
    assert same_answer(ours, notes["kafka"]), (ours["assignment"], notes["kafka"]["assignment"])


def _story_request(story: dict[str, Any]) -> dict[str, Any]:
    """The first request of an audit story (larger stories are kept as a reference)."""
    from groupcheck.audit.scenarios import random_spec
    from groupcheck.audit.story_group import StoryGroup as _Group

    assert story["call"] == 0
    return _Group(random_spec(story["seed"], story["scenario"])).request(story["assignor"])


def _digest(answer: dict[str, Any]) -> str:
    """A digest of everything `same_answer` compares, member order included."""
    import hashlib

    from groupcheck.properties.deviations import COMPARED

    text = json.dumps([list(answer["assignment"])] + [answer.get(k) for k in COMPARED])
    return hashlib.sha256(text.encode()).hexdigest()


def test_both_sides_get_the_identical_request_and_the_chain_follows_ours() -> None:
    """A stand-in for Kafka that gives nobody anything: every request it sees is the one the
    builtin saw, and each next request is built from the builtin's answer (members own what
    the builtin gave them), never from the stand-in's."""
    seen: list[tuple[str, dict[str, Any]]] = []

    def ours(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        seen.append(("ours", json.loads(json.dumps(request))))
        return builtin_answer(request)

    def empty_kafka(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        seen.append(("kafka", json.loads(json.dumps(request))))
        got, _ = builtin_answer(request)
        got["assignment"] = {m: [] for m in got["assignment"]}
        return got, False

    from groupcheck.audit.chain import run_chain
    from groupcheck.audit.scenarios import random_spec
    from groupcheck.audit.targets import AuditTarget

    result = StoriesResult("cooperative-sticky", 0)
    paired = PairedAssign(ours, empty_kafka, result, timeout=30)
    spec = next(s for s in (random_spec(0, i) for i in range(200))
                if len(s["members"]) > 1 and len(s["steps"]) > 1)
    paired.start(spec["scenario"])
    chain = run_chain(AuditTarget("pair", "cooperative-sticky", paired), spec, timeout=0)
    kafka_seen = [r for side, r in seen if side == "kafka"]
    assert kafka_seen == [r for side, r in seen if side == "ours"]
    assert len(kafka_seen) == chain.calls == result.requests >= 3
    assert result.differences == chain.calls
    assert [d.call for d in result.unexplained] == list(range(chain.calls))
    handed = 0
    for earlier, later in zip(chain.rounds, chain.rounds[1:], strict=False):
        given = earlier["response"]["assignment"]
        for m, v in later["request"]["members"].items():
            if m in given:
                assert v["owned"] == given[m]
                handed += len(given[m])
    assert handed > 0


def test_a_chunk_of_stories_counts_each_story_and_request_once() -> None:
    """The chunk runner on two builtin sides (no Java): no difference, every story and
    request counted, the shapes tallied per story."""
    result = run_chunk("builtin:range", "builtin:range", "range", 0, range(0, 40), 30.0)
    assert result.groups == 40 and result.requests >= 40 and result.differences == 0
    assert sum(n for s, n in result.shapes.items() if s.startswith("tier ")) == 40
