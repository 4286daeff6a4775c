"""The claim-blind reduction (``properties/scope/blind``, ``prove --no-gaps``): a target whose
leader never sees what members own is judged once per claim-free configuration, and that
is still a proof of the whole scope.

The reduction is checked against the full enumeration (every claim pattern run): the same
labelled configurations and the same violations, configuration for configuration, on the
eager builtins, on the bug zoo's eager mutant and on two assignors made here to break
where only generations or only claims decide. Where the leader does see claims, or the
answer is not EAGER, the reduction must not be used.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import pytest

from groupcheck.impl.assign_session import AssignSession
from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.types import Assignment, Cluster, Subscription
from groupcheck.properties.scope import Scope, prove
from groupcheck.properties.scope.blind import MODES, completions, projections
from groupcheck.properties.scope.enumeration import enumerate_scope, tasks_of
from groupcheck.properties.scope.orbits import MetadataShape, skeletons
from groupcheck.targets.registry import resolve
from groupcheck.targets.zoo.entries import ASSIGNOR_MUTANTS

from helpers.command_line import run_command

SCOPES = ["members=3,topics=2,partitions=1",
          "members=2,topics=2,partitions=2,generations=3,stale=2",
          "members=3,topics=1,partitions=2,claims=1,stale=0",
          "members=2,topics=1,partitions=2,racks=2"]


class GenerationSkewRange(RangeAssignor):
    """Breaks (raises) when its members' generations differ: a verdict that depends on
    generations, which the leader sees, and on nothing a member owns."""

    name = "range"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        if len({s.generation_id for s in subscriptions.values()}) > 1:
            raise ValueError("members of different generations")
        return super().assign(cluster, subscriptions)


class OwnedInUserDataRange(RangeAssignor):
    """An eager assignor whose consumers put what they own into their user data, and whose
    leader breaks (raises) when two members claim one partition: the leader sees claims."""

    name = "range"

    def __init__(self) -> None:
        self.owned: list[tuple[str, int]] = []

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.owned = list(assignment.partitions)

    def subscription_user_data(self, topics: set[str]) -> bytes | None:  # type: ignore[override]
        return json.dumps(self.owned).encode() if self.owned else None

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        claims = [tuple(tp) for s in subscriptions.values() if s.user_data
                  for tp in json.loads(s.user_data)]
        if len(claims) != len(set(claims)):
            raise ValueError("a partition claimed twice")
        return super().assign(cluster, subscriptions)


def _session(cls: Callable[[], Any]) -> Callable[[], AssignSession]:
    return lambda: AssignSession(lambda _: cls(), user_data=False)


def _both(assign: Any, assignor: str, session: Any, text: str,
          sticky: bool = False) -> tuple[Any, Any]:
    """The same scope without the gap (claims aggregated where sound) and in full."""
    scope = Scope.parse(text)
    blind = prove(assign, assignor, scope, session=session, sticky=sticky, workers=2,
                  gaps=False)
    full = prove(assign, assignor, scope, session=session, sticky=sticky, workers=2,
                 gaps=False, aggregate=False)
    return blind, full


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", SCOPES)
@pytest.mark.parametrize("level", [0, pytest.param(1, marks=pytest.mark.heavy)])
def test_projection_weights_count_every_configuration_of_each_task(text: str, level: int,
                                                                   mode: str) -> None:
    """Per metadata and member skeletons, the projections' weights (their own and their
    completions') add up to the labelled configurations of the full enumeration, and each
    projection holds only claims the mode leaves visible."""
    scope = Scope.parse(f"{text},symmetry={level}")
    skels = skeletons(scope)
    full: Counter[Any] = Counter()
    for config in enumerate_scope(scope):
        full[config.metadata, tuple(m[:3] for m in config.members)] += config.weight
    blind: Counter[Any] = Counter()
    for task, orbit in tasks_of(scope):
        for config, more in projections(scope, task, MetadataShape.of(scope, task[0], orbit), skels,
                                        mode):
            for topics, _, _, owned in config.members:
                assert not owned if mode == "all" else all(t in topics for t, _ in owned)
            blind[config.metadata, tuple(m[:3] for m in config.members)] += (
                config.weight + more)
    assert blind == full


def test_completions_count_hidden_claims_within_the_claim_and_stale_bounds() -> None:
    """Metadata t0-0 with t0-1, t1-0, t1-1 beyond it, at most two stale claims. Mode all,
    one member with a generation: t0-0 claimed or not (2) times at most two of three stale
    partitions (1 + 3 + 3); two such members: 4 subsets of t0-0's claimants times at most
    two stale claims over six (member, partition) pairs (1 + 6 + 15). Mode unsubscribed,
    one member of t0: only t1's two partitions hide claims (1 + 2 + 1); once it claims
    t0-1 (visible, stale), one stale claim is left (1 + 2)."""
    scope = Scope.parse("partitions=2,stale=2")
    shape = MetadataShape.of(scope, ((1, ()), (0, ())), 1)
    one = (((0,), 1, -1),)
    two = (((0,), 1, -1), ((0,), 2, -1))
    empty = ((0,),) * 4
    assert completions(scope, shape, ((((0,), 0, -1),)), "all", empty) == 1
    assert completions(scope, shape, one, "all", empty) == 2 * (1 + 3 + 3)
    assert completions(scope, shape, two, "all", empty) == 4 * (1 + 6 + 15)
    assert completions(scope, shape, one, "unsubscribed", empty) == 1 + 2 + 1
    assert completions(scope, shape, one, "unsubscribed", ((0,), (1,), (0,), (0,))) == 1 + 2


def _check_same(blind: Any, full: Any, mode: str | None) -> None:
    assert blind.claims_hidden == mode and full.claims_hidden is None
    assert blind.proved and not blind.gaps_measured and not blind.gaps
    assert blind.labelled == full.labelled
    assert blind.violations_labelled == full.violations_labelled
    if mode is not None:
        assert blind.configurations < full.configurations
        assert "I4b gap: not measured" in blind.table()


COOPERATIVE_MUTANTS = sorted(m for m in ASSIGNOR_MUTANTS if m.startswith("cooperative-"))


def _heavy_blind(target: str, text: str) -> list[pytest.MarkDecorator]:
    """The default run keeps one scope of each leader kind: range and the roundrobin
    mutant on the first scope; the cooperative builtin (half a minute) and the rest go to
    tox -e heavy, the cooperative mutants' first one standing for them."""
    light = text == SCOPES[0] and target in ("builtin:range", "mutant:roundrobin-topic-cursor")
    return [] if light else [pytest.mark.heavy]


@pytest.mark.parametrize("target,mode,text", [
    *[pytest.param(t, m, text, marks=_heavy_blind(t, text))
      for t, m in [("builtin:range", "all"), ("builtin:roundrobin", "all"),
                   ("mutant:roundrobin-topic-cursor", "all"),
                   ("builtin:cooperative-sticky", "unsubscribed")]
      for text in SCOPES[:2]],
    ("builtin:sticky", None, "members=2,topics=2,partitions=1"),
    # an eager leader that sees no claim, but is held to I4a: only unsubscribed claims hide
    ("mutant:custom-whole-topic", "unsubscribed", "members=3,topics=2,partitions=1,stale=0"),
    *[pytest.param(f"mutant:{m}", "unsubscribed", "members=3,topics=2,partitions=1,stale=0",
                   marks=[pytest.mark.heavy] if i else [])
      for i, m in enumerate(COOPERATIVE_MUTANTS)]])
def test_claim_blind_proof_finds_what_the_full_enumeration_finds(target: str, mode: str | None,
                                                                 text: str) -> None:
    """On the builtins and the zoo's eager and cooperative mutants the reduction each
    leader allows is used (none for sticky, whose user data carries every claim; only
    unsubscribed claims for an eager leader judged on I4a, since a hidden claim on a
    subscribed topic can make I4a's premise true), the run calls itself a proof, and it
    breaks each invariant on exactly as many configurations as the full run — I4a, I5 and
    I6 of the cooperative mutants and I3, I4a of the whole-topic one included."""
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    blind, full = _both(resolved.assign, resolved.assignor, resolved.assign_session, text,
                        resolved.balanced)
    _check_same(blind, full, mode)
    if mode == "unsubscribed":  # the verdicts compared are not empty
        assert full.violations_labelled.get("I6", 0) + full.violations_labelled.get("I4a", 0)


@pytest.mark.parametrize("text", [pytest.param(SCOPES[0], marks=pytest.mark.heavy), SCOPES[1]])
def test_a_verdict_that_depends_on_generations_survives_the_reduction(text: str) -> None:
    """Generations reach the leader, so the projections keep them: a leader that breaks on
    mixed generations is caught on exactly the configurations the full run catches."""
    session = _session(GenerationSkewRange)
    blind, full = _both(session(), "range", session, text)
    assert full.violations_labelled["ERROR"] > 0
    _check_same(blind, full, "all")


def test_a_leader_that_sees_claims_is_not_judged_claim_blind() -> None:
    """When a member's claims reach the leader (here, through user data), the premise check
    finds it and the run enumerates every claim pattern: the double claim is caught."""
    session = _session(OwnedInUserDataRange)
    blind, full = _both(session(), "range", session, "members=2,topics=2,partitions=1")
    assert "the leader sees what" in blind.claims_note
    assert full.violations_labelled["ERROR"] > 0
    _check_same(blind, full, None)


def test_measured_gaps_never_use_the_reduction() -> None:
    """The I4b gap reads every claim: a run that measures it enumerates them."""
    plain = resolve("builtin:range")
    assert plain.assign is not None
    measured = prove(plain.assign, "range", Scope.parse("members=2,topics=1"),
                     session=plain.assign_session, workers=1)
    assert measured.claims_hidden is None and measured.gaps and not measured.claims_note


class _BlindfoldedSession(AssignSession):
    """Claims it shows its leader nothing a member owns, whatever the assignor."""

    def leader_view(self, assignor: str, member: dict[str, Any]) -> Hashable:
        return (tuple(member["topics"]), member.get("generation"))


def test_a_cooperative_answer_stops_a_claim_blind_run() -> None:
    """The judge reads claims of a COOPERATIVE answer (I5, I6), so a claim-blind run that
    meets one refuses to go on rather than pass it."""
    session = _BlindfoldedSession(user_data=False)
    with pytest.raises(RuntimeError, match="not EAGER"):
        prove(session, "cooperative-sticky", Scope.parse("members=2,topics=1"),
              session=lambda: _BlindfoldedSession(user_data=False), sticky=False, workers=1,
              gaps=False)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert run_command(argv) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_cli_no_gaps_proves_range_at_three_partitions_as_the_full_run_counts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``prove --no-gaps --json`` reports a claim-blind proof that covers the configurations
    the full run covers."""
    args = ["prove", "--target", "builtin:range", "--scope", "members=2,topics=1,partitions=3",
            "--json", "--workers", "1", "--failures", str(tmp_path)]
    blind = _cli([*args, "--no-gaps"], capsys)
    full = _cli(args, capsys)
    assert blind["proved"] and blind["claimsAggregated"] == "all"
    assert not blind["gapsMeasured"]
    assert blind["ok"] and full["ok"]
    assert blind["labelled"] == full["labelled"]
    assert blind["configurations"] < full["configurations"] // 5
