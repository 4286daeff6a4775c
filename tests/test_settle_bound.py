"""I11's bound on a ``settle``: rebalances, and the time `settle_bound` derives from the
group's timeouts (logical time on a target with a clock).

`tests/data/settle_topic_deleted_ghost_members.json` is the state machine's seed 6 on
builtin:cooperative-sticky: six members settle on t2, two leave and rejoin with
[range, cooperative-sticky], injected UNKNOWN_MEMBER_ID heartbeats leave the coordinator
listing two members' old ids, c1's SyncGroup gets REBALANCE_IN_PROGRESS, t2 is deleted.
Each old id holds a rebalance until its session timeout (Kafka's ``onExpireHeartbeat``
removes it, then ``joinPurgatory.checkAndComplete``), so the group settles at generation 4,
three rebalances on, but at protocol step 401: a fixed budget of 400 steps called it
unsettled. The settle is now bounded by rebalances and by time.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from groupcheck.model import events as E
from groupcheck.model.event_types import Join
from groupcheck.model.group_events import Partitions, Settle
from groupcheck.model.replay import replay_events
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import GroupView
from groupcheck.properties.settle_bound import Disturbances, settle_bound
from groupcheck.targets.adapters.builtin import SESSION_TIMEOUT_MS, BuiltinGroup
from groupcheck.targets.registry import make_group_target

DATA = Path(__file__).parent / "data"
GHOSTS = DATA / "settle_topic_deleted_ghost_members.json"


def _ghost_story() -> dict[str, object]:
    data: dict[str, object] = json.loads(GHOSTS.read_text(encoding="utf-8"))
    return data


def test_the_group_whose_topic_is_deleted_settles_with_nothing_owned() -> None:
    data = _ghost_story()
    outcome = replay_events(make_group_target(str(data["target"])), E.read_events(data["events"]))
    assert outcome.violations == [], outcome.story
    end = outcome.views[-1]
    assert end is not None and end.settled
    assert end.state == "Stable" and end.generation == 4 and "t2" not in end.partitions
    assert all(m.in_group and not m.owned for m in end.members.values())


def test_the_settle_needs_more_steps_than_the_old_budget_but_few_rebalances() -> None:
    """Why 400 steps were wrong: two session timeouts of waiting, six members polling."""
    data = _ghost_story()
    events = E.read_events(data["events"])
    target = BuiltinGroup("builtin:cooperative-sticky")
    model = ReferenceModel()
    for event in events[:-1]:
        assert E.apply_event(event, target, model) == []
    assert events[-1] == Settle()
    bound = settle_bound(target.timeouts, Disturbances(
        E.MAX_SETTLE_GENERATIONS + model.injected_errors, model.abandoned))
    assert model.abandoned >= 2  # the two old ids the UNKNOWN_MEMBER_ID answers left
    start_gen, start_ms = target.view().generation, target.clock_ms
    steps = 0
    view: GroupView = target.view()
    while not view.settled:
        assert target.step()
        steps += 1
        view = target.view()
    assert steps > E.SETTLE_BUDGET
    assert view.generation - start_gen == 3 <= E.MAX_SETTLE_GENERATIONS
    assert target.clock_ms - start_ms >= 2 * SESSION_TIMEOUT_MS
    assert target.clock_ms - start_ms <= bound.ms
    target.close()


class _NeverSettles(BuiltinGroup):
    """Our group, but never reported settled: the clock goes on, the settle must stop."""

    def _settled(self, listed: set[str]) -> bool:
        return False


class _FrozenClock(_NeverSettles):
    """Busy for ever without moving its clock (a livelock): the step cap stops it."""

    def step(self, within_ms: int | None = None) -> bool:
        return True


class _Flapping(_NeverSettles):
    """A generation that moves at every look (a group that keeps rebalancing)."""

    looks = 0

    def view(self) -> GroupView:
        self.looks += 1
        view = super().view()
        return replace(view, generation=view.generation + self.looks)


class _IdleUnsettled(_NeverSettles):
    """A group of real clients gone quiet before it settled: a step waits as long as it is
    let, then reports that nothing happened (the clock moves by the wait)."""

    waits: list[int | None]

    def step(self, within_ms: int | None = None) -> bool:
        self.waits = [*getattr(self, "waits", []), within_ms]
        self.now += 60_000 if within_ms is None else within_ms
        return False


def _settle_on(target: BuiltinGroup) -> list[str]:
    model = ReferenceModel()
    for event in (Partitions("t0", 2), Join("c1", ("t0",), ("cooperative-sticky",))):
        assert E.apply_event(event, target, model) == []
    try:
        return E.apply_event(Settle(), target, model)
    finally:
        target.close()


def test_a_group_that_never_settles_fails_past_the_bound_its_timeouts_give() -> None:
    target = _NeverSettles("never")
    out = _settle_on(target)
    bound = settle_bound(target.timeouts, Disturbances(E.MAX_SETTLE_GENERATIONS))
    assert len(out) == 1 and out[0].startswith("I11: not settled after ")
    waited = int(out[0].split()[4])
    assert bound.ms < waited <= target.clock_ms
    assert out[0].endswith(f"the bound is {bound.ms} ms = {bound.derivation}")
    assert "rebalance timeout 30000" in bound.derivation


def test_an_idle_group_is_waited_for_only_what_is_left_of_the_bound() -> None:
    """A step's wait is what the settle bound leaves (not a fixed minute): the settle of a
    quiet, unsettled group ends just past the bound, judged against it."""
    target = _IdleUnsettled("idle")
    out = _settle_on(target)
    bound = settle_bound(target.timeouts, Disturbances(E.MAX_SETTLE_GENERATIONS))
    assert target.waits == [bound.ms + 1]
    assert out == [f"I11: not settled after {bound.ms + 1} ms; the bound is {bound.ms} ms = "
                   f"{bound.derivation}"]


def test_a_group_whose_clock_never_moves_fails_at_the_step_cap() -> None:
    assert _settle_on(_FrozenClock("frozen")) == [
        f"I11: not settled after {E.SETTLE_STEP_CAP} protocol steps"]


def test_a_group_that_keeps_rebalancing_fails_once_past_the_allowed_rebalances() -> None:
    out = _settle_on(_Flapping("flapping"))
    assert out == [f"I11: not settled after {E.MAX_SETTLE_GENERATIONS + 1} rebalances "
                   f"(at most {E.MAX_SETTLE_GENERATIONS} allowed)"]
