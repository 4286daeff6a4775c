"""The audit chain's inherited violations, without Spark: where Kafka's own client does
the same, a violation is classified by its rule (K1: a tied or oldest claim kept on
cooperative-sticky's general path; K3: a group that settles late; K4: a rack-aware group
whose answers cycle) and the story goes on; anything else stays the target's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import run_chain
from groupcheck.audit.scenarios import random_spec
from groupcheck.audit.targets import AuditTarget, resolve_plugin
from groupcheck.engines.resolving import resolve_audit_target

from helpers import TARGETS

BROKEN = TARGETS / "audit_targets.py"
#: the audit pipeline's tests: ``tox -e audit`` (``pytest -m audit``) runs them all
pytestmark = pytest.mark.audit


def tie_request(topics_of_a: list[str], generation_of_a: int) -> dict[str, Any]:
    """a and b both claim t-0; b also owns t-1; a subscribes to ``topics_of_a``."""
    return {"op": "assign", "assignor": "cooperative-sticky", "mode": "client",
            "partitions": {"t": 2, "u": 1},
            "members": {"a": {"topics": topics_of_a, "owned": [["t", 0]],
                              "generation": generation_of_a},
                        "b": {"topics": ["t"], "owned": [["t", 0], ["t", 1]],
                              "generation": 3}},
            "newGeneration": 4}


def test_kafka_keeping_a_tied_claim_on_the_general_path_is_inherited_and_goes_on() -> None:
    """cooperative-sticky with unequal subscriptions gives t-0 to one of two claimants of
    equal generation, as Kafka does: I6 is violated and classified K1, and the story
    continues to the next request."""
    target = resolve_audit_target("builtin:cooperative-sticky")
    spec = {"kind": "requests", "requests": [tie_request(["t", "u"], 3),
                                             tie_request(["t", "u"], 3)]}
    result = run_chain(target, spec)
    assert result.verdicts["I6"] == 1 and result.violated
    assert result.inherited == {"I6": "K1"} and not result.own_violation
    assert result.inherited_column() == "I6:K1"
    assert result.calls == 2  # the story did not stop at the first request


def test_a_tie_on_equal_subscriptions_is_a_plain_violation() -> None:
    """Kafka drops equal-generation double claims when subscriptions are equal; a target
    that keeps one there is not excused."""
    target = resolve_plugin(f"pyfn:{BROKEN}:first_claimant_keeps")
    request = tie_request(["t"], 3)
    request["partitions"] = {"t": 2}
    result = run_chain(target, {"kind": "requests", "requests": [request]})
    assert result.verdicts["I6"] == 1 and result.inherited == {} and result.own_violation
    assert run_chain(resolve_audit_target("builtin:cooperative-sticky"),
                     {"kind": "requests", "requests": [request]}).verdicts["I6"] == 0


def test_a_stale_claim_that_wins_on_equal_subscriptions_is_never_inherited() -> None:
    """With equal subscriptions Kafka resolves claims by generation, so a target that
    lets the stale claimant win there is not excused."""
    target = resolve_plugin(f"pyfn:{BROKEN}:first_claimant_keeps")
    request = tie_request(["t"], 2)
    request["partitions"] = {"t": 2}
    result = run_chain(target, {"kind": "requests", "requests": [request]})
    assert "I6: t-0 was given to a (generation 2)" in result.violations[0]
    assert result.inherited == {} and result.own_violation


def test_kafka_giving_a_shared_partition_to_its_oldest_claimant_is_inherited() -> None:
    """The shape of Kafka's KAFKA-15106 vectors: c1, c2, c3 at generations 1, 2, 3 all claim
    t-2 and c4 subscribes to another topic (the general path); Kafka gives t-2 to c1, the
    oldest claimant, in the same rebalance. The builtin does the same and it is K1."""
    request = {"op": "assign", "assignor": "cooperative-sticky", "mode": "raw",
               "partitions": {"t": 6, "u": 1},
               "members": {"c1": {"topics": ["t"], "owned": [["t", 0], ["t", 2]],
                                  "generation": 1},
                           "c2": {"topics": ["t"], "owned": [["t", 1], ["t", 2], ["t", 3]],
                                  "generation": 2},
                           "c3": {"topics": ["t"], "owned": [["t", 2], ["t", 4], ["t", 5]],
                                  "generation": 3},
                           "c4": {"topics": ["u"], "owned": [["u", 0]], "generation": 2}}}
    result = run_chain(resolve_audit_target("builtin:cooperative-sticky"),
                       {"kind": "requests", "requests": [request]})
    assert any(v.startswith("I6: t-2 was given to c1 (generation 1)") for v in result.violations)
    assert result.inherited == {"I6": "K1"} and not result.own_violation


def test_the_kafka_rule_needs_the_cooperative_general_path_and_a_claimant() -> None:
    from groupcheck.properties.generations import ClaimBreach
    from groupcheck.properties.kafka_rules import inherited_i6

    subs = {"a": ["t", "u"], "b": ["t"]}
    tie = ClaimBreach(("t", 0), "a", 3, (("b", 3),))
    stale = ClaimBreach(("t", 0), "a", 2, (("b", 3),))
    stranger = ClaimBreach(("t", 0), "c", None, (("b", 3),))
    assert inherited_i6("cooperative-sticky", subs, [tie]) == "K1"
    assert inherited_i6("cooperative-sticky", subs, [tie, stale]) == "K1"
    assert inherited_i6("cooperative-sticky", subs, [tie, stranger]) is None
    assert inherited_i6("cooperative-sticky", subs, [stranger]) is None
    assert inherited_i6("cooperative-sticky", {"a": ["t"], "b": ["t"]}, [tie]) is None
    assert inherited_i6("sticky", subs, [tie]) is None
    assert inherited_i6("cooperative-sticky", subs, []) is None


RACK_AWARE_JOIN = {
    "format": "groupcheck-audit-spec/1", "kind": "random", "scenario": 97434, "seed": 0,
    "tier": 0, "partitions": {"t0": 7, "t1": 8},
    "racks": {"t0": [["r0", "r1"], ["r0"], ["r0"], ["r1"], ["r1"], ["r2"], ["r0"]],
              "t1": [["r0", "r2"], ["r2", "r0"], ["r2"], ["r2"], ["r1", "r0"], ["r2"],
                     ["r2", "r0"], ["r0"]]},
    "members": [{"id": "c0", "topics": ["t0", "t1"],
                 "owned": ([["t0", p] for p in range(7)]
                           + [["t1", p] for p in (0, 1, 2, 3, 5, 6, 7)]),
                 "generation": 2, "rack": "r0"}],
    "steps": [[{"op": "join", "member": {"id": "c1", "topics": ["t0", "t1"], "owned": [],
                                         "generation": None, "rack": "r1"}},
               {"op": "join", "member": {"id": "c2", "topics": ["t1"], "owned": [],
                                         "generation": None, "rack": "r0"}}]]}


def test_settling_within_kafkas_four_follow_ups_is_inherited_k3() -> None:
    """Audit seed 0, scenario 97434: two members join a rack-aware cooperative-sticky group
    at once and every follow-up moves a few partitions, until the fourth settles. That is
    past groupcheck's bound (I11) but within the four Kafka's own tests allow: rule K3, and
    the story goes on."""
    result = run_chain(resolve_audit_target("builtin:cooperative-sticky"), RACK_AWARE_JOIN)
    assert result.verdicts["I11"] == 1, result.violations
    assert any("settled only after 4 follow-up" in v for v in result.violations)
    assert result.inherited.get("I11") == "K3" and not result.own_violation


def test_k3_needs_cooperative_sticky_and_a_group_that_settles() -> None:
    """Within Kafka's four follow-ups any cooperative-sticky group is covered; past them
    only a rack-aware one, up to the horizon; a group that never settles never is (K4
    covers the one that cycles)."""
    from groupcheck.properties.kafka_rules import CYCLE_HORIZON, KAFKA_FOLLOW_UPS, inherited_i11

    assert inherited_i11("cooperative-sticky", KAFKA_FOLLOW_UPS, settled=True) == "K3"
    assert inherited_i11("cooperative-sticky", KAFKA_FOLLOW_UPS, settled=False) is None
    assert inherited_i11("cooperative-sticky", KAFKA_FOLLOW_UPS + 1, settled=True) is None
    assert inherited_i11("cooperative-sticky", KAFKA_FOLLOW_UPS + 1, settled=True,
                         rack_aware=True) == "K3"
    assert inherited_i11("cooperative-sticky", CYCLE_HORIZON, settled=True,
                         rack_aware=True) == "K3"
    assert inherited_i11("cooperative-sticky", CYCLE_HORIZON + 1, settled=True,
                         rack_aware=True) is None
    assert inherited_i11("fake", KAFKA_FOLLOW_UPS, settled=True) is None


def test_a_rack_aware_cooperative_group_that_flaps_forever_is_inherited_k4() -> None:
    """Audit seed 0, scenario 96646 (tests/data/rack_aware_flap_spec.json): 11 members with
    racks on cooperative-sticky's general path. From one round to the next the answer
    alternates: three partitions are withheld for a rotation that the next round undoes,
    while t5-15 goes to c10 and is withheld again, so the group never settles. Its answers
    repeat, and Kafka's client gives the same ones (test_java_target): rule K4, and the
    story goes on."""
    spec = json.loads((Path(__file__).parent / "data" / "rack_aware_flap_spec.json")
                      .read_text(encoding="utf-8"))
    result = run_chain(resolve_audit_target("builtin:cooperative-sticky"), spec)
    assert result.verdicts["I11"] == 1 and result.inherited.get("I11") == "K4"
    assert not result.own_violation
    assert any("no settled assignment after 8 follow-up rebalance(s); the answers cycle" in v
               for v in result.violations)


def _flapping(racks: bool) -> tuple[AuditTarget, dict[str, Any]]:
    """A cooperative target whose answers alternate: a owning t-0 gets t-1 instead and the
    other way round, each time withholding the one it gave up, so some partition is always
    unowned and the group never settles; on a group with or without racks."""
    def assign(request: dict[str, Any]) -> dict[str, Any]:
        a_has_0 = ["t", 0] in request["members"]["a"]["owned"]
        return {"assignment": {"a": [["t", 1 if a_has_0 else 0]], "b": [["t", 2]]},
                "protocol": "COOPERATIVE", "generation": request.get("newGeneration")}

    spec: dict[str, Any] = {
        "format": "groupcheck-audit-spec/1", "kind": "random", "scenario": 0, "seed": 0,
        "tier": 0, "partitions": {"t": 3},
        "members": [{"id": "a", "topics": ["t"], "owned": [], "generation": None},
                    {"id": "b", "topics": ["t"], "owned": [], "generation": None}],
        "steps": []}
    if racks:
        spec["racks"] = {"t": [["r0"], ["r1"], ["r0"]]}
    return AuditTarget("pyfn:flap", "cooperative-sticky", assign), spec


def test_k4_needs_racks_and_answers_that_repeat() -> None:
    """The same cycling answers: K4 on a rack-aware group, an own I11 without racks; a
    group still changing without a repeat, or another assignor, is never covered."""
    from groupcheck.properties.kafka_rules import SETTLE_HORIZON, inherited_i11

    for racks, label in ((True, "K4"), (False, None)):
        target, spec = _flapping(racks)
        result = run_chain(target, spec)
        assert result.verdicts["I11"] == 1, result.violations
        assert result.inherited.get("I11") == label
    assert inherited_i11("cooperative-sticky", SETTLE_HORIZON, settled=False,
                         rack_aware=True, cycled=False) is None
    assert inherited_i11("sticky", SETTLE_HORIZON, settled=False, rack_aware=True,
                         cycled=True) is None


def test_a_story_with_a_late_settle_and_a_cycle_keeps_both_rules() -> None:
    """Audit seed 0, scenario 31727 (racks): one rebalance settles only at its fifth
    follow-up (K3), a later one cycles (K4); every I11 violation has a rule, so the
    invariant stays labelled with both."""
    result = run_chain(resolve_audit_target("builtin:cooperative-sticky"),
                       random_spec(0, 31727))
    messages = [v for v in result.violations if v.startswith("I11")]
    assert any("settled only after 5" in v for v in messages)
    assert any("the answers cycle" in v for v in messages)
    assert result.inherited == {"I11": "K3+K4"} and not result.own_violation


def test_a_group_still_changing_at_the_horizon_is_followed_until_it_settles() -> None:
    """Audit seed 0, scenario 20579 (racks): still changing after eight follow-ups without
    a repeated answer, the group is followed on and settles at the 36th (K3)."""
    from groupcheck.properties.kafka_rules import CYCLE_HORIZON, SETTLE_HORIZON

    result = run_chain(resolve_audit_target("builtin:cooperative-sticky"),
                       random_spec(0, 20579))
    assert any("settled only after 36 follow-up" in v for v in result.violations)
    assert SETTLE_HORIZON < 36 <= CYCLE_HORIZON
    assert result.inherited == {"I11": "K3"}
