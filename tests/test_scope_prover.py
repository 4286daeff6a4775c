"""The exhaustive-scope prover: symmetry bookkeeping, clean proofs of the builtins on a tiny
scope, broken assign functions caught with the right invariant and the smallest
counterexample, and the ``prove`` command.

These tests need z3 (the ``z3`` extra); tox installs it for the default run.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from groupcheck.engines import EngineInputError as CommandError
from groupcheck.impl.assign_op import run_assign
from groupcheck.properties.scope import Scope, enumerate_scope, prove

from helpers.command_line import run_command

TINY = Scope.parse("members=2,topics=2,partitions=1")


def _members(request: dict[str, Any]) -> dict[str, Any]:
    members: dict[str, Any] = request["members"]
    return members


@pytest.mark.parametrize("text", ["members=2,topics=2,partitions=1",
                                  "members=3,topics=1,partitions=2,generations=3,claims=3",
                                  "members=2,topics=1,partitions=2,racks=2"])
def test_symmetry_weights_count_every_labelled_configuration(text: str) -> None:
    """The representatives' weights add up to exactly the number of configurations the
    unreduced enumeration (symmetry=0) produces, and the reduction saves something."""
    reduced = list(enumerate_scope(Scope.parse(text)))
    full = sum(1 for _ in enumerate_scope(Scope.parse(text + ",symmetry=0")))
    assert sum(c.weight for c in reduced) == full
    assert len(reduced) < full


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky"])
def test_builtin_assignors_hold_on_a_tiny_scope(assignor: str) -> None:
    """Every configuration of members=2,topics=2,partitions=1 (stale and conflicting claims
    included) keeps every invariant for our builtin assignor; symmetry saved work and every
    configuration is either in the gap histogram or counted as not judged."""
    report = prove(run_assign, assignor, TINY, target=f"builtin:{assignor}", workers=1,
                   exact=assignor == "range")
    assert report.ok, report.table()
    assert report.configurations == sum(1 for _ in enumerate_scope(TINY))
    assert report.symmetry_saved > 0 and report.labelled > report.configurations
    assert sum(report.gaps.values()) + report.gap_unjudged == report.configurations
    assert {g for g in report.gaps if g} == set(report.gap_examples)
    assert all(ex["moves"] - ex["optimum"] == g for g, ex in report.gap_examples.items())
    if assignor == "sticky":
        assert report.gap_unjudged == 0 and set(report.gaps) == {0}


def test_cooperative_sticky_shows_only_kafkas_own_findings_on_a_tiny_scope() -> None:
    """cooperative-sticky (like Kafka's) keeps I1, I2, I3 and I5 on the tiny scope; what it
    breaks is I6 on the general path (a shared partition kept by one of its claimants,
    rule K1) and I4a with an empty-subscription member (partitions withheld for a follow-up,
    rule K2), each classified as Kafka's own: the report is ok, and not strict_ok."""
    report = prove(run_assign, "cooperative-sticky", TINY, workers=1)
    assert set(report.violations) <= {"I4a", "I6"}, report.table()
    assert report.violations and report.inherited == report.violations, report.table()
    assert report.ok and not report.strict_ok
    assert set(report.rules) <= {"I4a", "I6"}
    assert all(report.rules[inv] == ["K2" if inv == "I4a" else "K1"] for inv in report.rules)
    assert "Kafka's own behaviour" in report.table()


def _withhold_everything_claimed(request: dict[str, Any]) -> dict[str, Any]:
    """Cooperative, empty-subscription members present: every claimed partition is revoked
    and given to nobody (K2's shape), but a claimed partition of a member subscribed to
    nothing else goes to another member (a move, never Kafka's)."""
    members = request["members"]
    out: dict[str, list[list[Any]]] = {m: [] for m in members}
    claimed = {(t, p) for v in members.values() for t, p in v["owned"]}
    for topic, count in sorted(request["partitions"].items()):
        subs = sorted(m for m, v in members.items() if topic in v["topics"])
        for p in range(count):
            if (topic, p) not in claimed and subs:
                out[subs[p % len(subs)]].append([topic, p])
    return {"assignment": out, "protocol": "COOPERATIVE", "generation": 9}


def test_only_withheld_revocations_next_to_an_empty_member_are_kafkas_own() -> None:
    """K2 covers a balanced assignment whose partitions are revoked and withheld while a
    member subscribes to nothing; the same churn without an empty member stays a plain I4a
    violation, so a report with it is not ok."""
    from groupcheck.properties.kafka_rules import inherited_i4a

    prev = {"a": [("t", 0)], "b": [("t", 1)]}
    withheld = {"a": [("t", 0)], "b": []}
    moved = {"a": [("t", 0), ("t", 1)], "b": []}
    with_empty = {"a": ["t"], "b": ["t"], "e": []}
    assert inherited_i4a("cooperative-sticky", with_empty, prev, withheld) == "K2"
    assert inherited_i4a("cooperative-sticky", with_empty, prev, moved) is None
    assert inherited_i4a("cooperative-sticky", {"a": ["t"], "b": ["t"]}, prev, withheld) is None
    assert inherited_i4a("sticky", with_empty, prev, withheld) is None
    report = prove(_withhold_everything_claimed, "cooperative-sticky",
                   Scope.parse("members=2,topics=1,partitions=2,generations=1"), workers=1)
    assert report.violations.get("I4a") and not report.ok


def _every_subscriber_gets_everything(request: dict[str, Any]) -> dict[str, Any]:
    out = {m: [[t, p] for t in v["topics"] for p in range(request["partitions"].get(t, 0))]
           for m, v in request["members"].items()}
    return {"assignment": out, "protocol": "EAGER", "generation": 1}


def test_a_partition_given_twice_is_caught_as_i1_with_the_smallest_case(tmp_path: Path) -> None:
    """An assign function that gives each partition to every subscriber breaks I1; the
    smallest counterexample is two members subscribed to one topic of one partition, no
    claims; it is saved as a file whose top level is the request (replayable with
    ``groupcheck assign``). Runs on two worker processes."""
    report = prove(_every_subscriber_gets_everything, "range",
                   Scope.parse("members=3,topics=2,partitions=1,generations=1,claims=1"),
                   target="python:broken", workers=2, failures=tmp_path)
    assert not report.ok and report.violations["I1"] > 0
    cex = report.counterexamples["I1"]
    request = cex.rounds[cex.round_no][0]
    assert len(request["partitions"]) == 1 and list(request["partitions"].values()) == [1]
    (topic,) = request["partitions"]
    assert [v["topics"] for v in _members(request).values()] == [[topic], [topic]]
    assert all(v["owned"] == [] for v in _members(request).values())
    assert cex.violations == [f"I1: {topic}-0 assigned to m0, m1"]
    assert cex.file is not None
    saved = json.loads(Path(cex.file).read_text())
    assert saved["members"] == request["members"] and saved["assignor"] == "range"
    assert saved["groupcheck"]["invariant"] == "I1"
    assert "error" not in run_assign(saved)


def _move_everything(request: dict[str, Any]) -> dict[str, Any]:
    """Each partition, in order, to the least loaded subscriber that does not claim it
    (a claimant only when nobody else subscribes): it moves whatever it can."""
    members = request["members"]
    out: dict[str, list[list[Any]]] = {m: [] for m in members}
    for topic in sorted(request["partitions"]):
        for p in range(request["partitions"][topic]):
            subscribers = [m for m in members if topic in members[m]["topics"]]
            strangers = [m for m in subscribers if [topic, p] not in members[m]["owned"]]
            pool = strangers or subscribers
            if pool:
                out[min(pool, key=lambda m: len(out[m]))].append([topic, p])
    return {"assignment": out, "protocol": "EAGER", "generation": 9}


def test_an_assignor_that_moves_everything_is_caught_as_i4a() -> None:
    """Judged as a sticky assignor, one that moves every partition it can breaks I4a; the
    smallest counterexample: two members in the same generation, one partition, owned by
    one of them and handed to the other."""
    report = prove(_move_everything, "fake", Scope.parse("members=3,topics=1,partitions=2"),
                   workers=1, sticky=True)
    assert report.violations.get("I4a", 0) > 0
    cex = report.counterexamples["I4a"]
    request = cex.rounds[0][0]
    members = _members(request)
    assert len(members) == 2 and sum(request["partitions"].values()) == 1
    assert sum(len(v["owned"]) for v in members.values()) == 1
    assert {v["generation"] for v in members.values()} == {1}
    assert cex.violations == ["I4a: 1 partition(s) moved although the previous assignment "
                              "was balanced and valid"]


def _cooperative_mover(request: dict[str, Any]) -> dict[str, Any]:
    answer = _move_everything(request)
    answer["protocol"] = "COOPERATIVE"
    return answer


def test_a_cooperative_assignor_that_ignores_claims_is_caught_as_i5_and_i6() -> None:
    """A COOPERATIVE assignor that ignores ownership gives owned partitions away in the same
    rebalance (I5) and settles contested claims without regard to generations (I6); the
    smallest I6 case is two members, one partition, both claiming it."""
    report = prove(_cooperative_mover, "fake",
                   Scope.parse("members=2,topics=1,partitions=2"), workers=1)
    assert report.violations.get("I5", 0) > 0 and report.violations.get("I6", 0) > 0
    request = report.counterexamples["I6"].rounds[0][0]
    members = _members(request)
    assert len(members) == 2 and sum(request["partitions"].values()) == 1
    assert all(len(v["owned"]) == 1 for v in members.values())


def test_an_exception_is_reported_as_error_with_the_smallest_case() -> None:
    """An assign function that raises on three members is reported as ERROR, and the
    smallest such configuration has three members and nothing else."""
    def fragile(request: dict[str, Any]) -> dict[str, Any]:
        if len(request["members"]) == 3:
            raise ValueError("three is a crowd")
        return run_assign(request)

    report = prove(fragile, "range", Scope.parse("members=3,topics=1,partitions=1"),
                   workers=1)
    cex = report.counterexamples["ERROR"]
    request = cex.rounds[0][0]
    assert cex.violations == ["ERROR: assign raised ValueError: three is a crowd"]
    assert len(request["members"]) == 3 and request["partitions"] == {}
    assert all(v["topics"] == [] and v["generation"] is None
               for v in _members(request).values())


@pytest.mark.parametrize("text, message", [
    ("members=3,colour=2", "bad scope item"),
    ("members=three", "must be an integer"),
    ("partitions=99", "between 0 and 8"),
    ("members", "bad scope item"),
])
def test_bad_scopes_are_rejected_with_one_line(text: str, message: str) -> None:
    """A malformed scope raises ValueError naming what is wrong."""
    with pytest.raises(ValueError, match=message):
        Scope.parse(text)


def test_prove_command_exit_codes_and_json(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    """``prove`` exits 0 on a clean proof, prints a table (or one JSON object with
    --json), and rejects unknown targets, targets without an assign function and bad scopes
    with a one-line CommandError."""
    base = ["prove", "--target", "builtin:roundrobin", "--scope",
            "members=2,topics=1,partitions=2", "--workers", "1", "--failures", str(tmp_path)]
    assert run_command(base) == 0
    assert "every invariant held" in capsys.readouterr().out
    assert run_command(base + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["configurations"] > 0 and data["symmetrySaved"] > 0
    with pytest.raises(CommandError, match="unknown builtin assignor"):
        run_command(["prove", "--target", "builtin:nope"])
    with pytest.raises(CommandError, match="no assign function"):
        run_command(["prove", "--target", "builtin:codec"])
    with pytest.raises(CommandError, match="is not one of"):
        run_command(["prove", "--target", "jsonl:cat", "--assignor", "nope"])
    with pytest.raises(CommandError, match="between"):
        run_command(["prove", "--target", "builtin:range", "--scope", "members=0"])


def _flapping(request: dict[str, Any]) -> dict[str, Any]:
    """COOPERATIVE, everything to the first subscriber except one partition, chosen by the
    parity of the generation: it never settles when a topic has two partitions."""
    answer = _every_subscriber_gets_everything(request)
    generation = max([v["generation"] or 0 for v in request["members"].values()], default=0)
    first: dict[str, list[list[Any]]] = {m: [] for m in request["members"]}
    taken = set()
    for m, parts in answer["assignment"].items():
        for t, p in parts:
            if (t, p) not in taken and not (p == generation % 2 and
                                            request["partitions"].get(t, 0) == 2):
                first[m].append([t, p])
            taken.add((t, p))
    return {"assignment": first, "protocol": "COOPERATIVE", "generation": generation + 1}


def _stubborn(request: dict[str, Any]) -> dict[str, Any]:
    """COOPERATIVE, everything to the first subscriber except partition 1 of every topic,
    which it never assigns: it settles, incomplete."""
    answer = _flapping(request)
    answer["assignment"] = {m: [tp for tp in parts if tp[1] != 1]
                            for m, parts in _every_subscriber_gets_everything(request)[
                                "assignment"].items()}
    seen: set[tuple[str, int]] = set()
    for parts in answer["assignment"].values():
        parts[:] = [tp for tp in parts if (tp[0], tp[1]) not in seen
                    and not seen.add((tp[0], tp[1]))]  # type: ignore[func-returns-value]
    return answer


def test_a_cooperative_group_that_never_settles_is_i11_and_a_stuck_gap_is_i2() -> None:
    """Follow-up rebalances run while a cooperative answer leaves partitions out: an answer
    that keeps changing after two follow-ups breaks I11 (convergence); one that stops
    changing with a partition unowned breaks I2."""
    scope = Scope.parse("members=1,topics=1,partitions=2,generations=1")
    flapping = prove(_flapping, "fake", scope, workers=1)
    assert set(flapping.violations) == {"I11"}, flapping.table()
    cex = flapping.counterexamples["I11"]
    assert len(cex.rounds) == 3 and cex.violations[0].startswith(
        "I11: no settled assignment after 2 follow-up rebalance(s)")
    stuck = prove(_stubborn, "fake", scope, workers=1)
    assert set(stuck.violations) == {"I2"}, stuck.table()
    assert stuck.counterexamples["I2"].violations[0].endswith(
        "(after 1 follow-up rebalance(s))")


def test_prove_exits_1_on_kafkas_own_findings_only_with_strict(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """cooperative-sticky's labelled findings (K1, K2) leave ``prove`` at exit 0 with the
    labels shown; ``--strict`` turns them into exit 1; the JSON names the rules."""
    base = ["prove", "--target", "builtin:cooperative-sticky", "--scope",
            "members=2,topics=2,partitions=1", "--workers", "1", "--failures", str(tmp_path)]
    assert run_command(base) == 0
    assert "Kafka's own behaviour" in capsys.readouterr().out
    assert run_command(base + ["--strict"]) == 1
    capsys.readouterr()
    assert run_command(base + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["violations"]
    assert set(data["inheritedFromKafka"]) == set(data["violations"])
    assert all(v["inheritedFromKafka"] in ("K1", "K2")
               for v in data["counterexamples"].values())


def test_a_prover_run_past_its_deadline_is_no_proof_and_says_so() -> None:
    report = prove(run_assign, "range", TINY, workers=1, deadline=time.perf_counter() - 1.0)
    assert report.units_done == 0 < report.units and not report.complete
    assert not report.proved and report.configurations == 0
    assert "STOPPED, NOT PROVED" in report.table()
    assert f"stopped at its deadline after 0 of {report.units} units" in report.table()
    whole = prove(run_assign, "range", TINY, workers=1)
    assert whole.complete and whole.proved and whole.units_done == whole.units


def test_an_in_process_prove_leaves_ctrl_c_to_the_caller() -> None:
    """Only the pool's forked workers ignore SIGINT: a prove run in the caller's process
    (one worker) leaves the caller's Ctrl-C handler as it found it."""

    def callers_handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, callers_handler)
    try:
        prove(run_assign, "range", TINY, workers=1)
        assert signal.getsignal(signal.SIGINT) is callers_handler
    finally:
        signal.signal(signal.SIGINT, before)
