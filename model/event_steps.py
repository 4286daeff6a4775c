"""What an event does besides its own target call: watching the group's protocol steps, the
settle bound (I11) and the member-level checks of a subscription change (I9).

The event types (model/event_types.py) call these after acting on the target; every helper
returns the violations the reference model saw along the way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..properties import membership as M
from ..properties.group import GroupTarget, GroupView, MemberView
from ..properties.settle_bound import Disturbances, GroupTimeouts, SettleBound, settle_bound
from .spec import ReferenceModel

__all__ = ["MAX_SETTLE_GENERATIONS", "SETTLE_BUDGET", "SETTLE_STEP_CAP", "after", "drain",
           "observe", "rolled", "settle", "steps", "subscribed", "unsubscribed", "until"]

#: protocol steps a ``settle`` event may take on a target that states no timeouts (the
#: others are bounded in time, `settle_bound`); a static twin's wait for its fencing too
SETTLE_BUDGET = 400
#: generations a settle may add: eager needs 1 rebalance, cooperative 1 + 2 follow-ups
#: (DESIGN I11), plus one for a leader that notices new metadata; a settle also gets one
#: more for each error answer injected since the last settle (the member it reaches
#: rejoins: a rebalance no change asked for)
MAX_SETTLE_GENERATIONS = 4
#: steps a target bounded in time may take without its clock passing the bound; past it the
#: group is livelocked
SETTLE_STEP_CAP = 20_000


def last_seen(model: ReferenceModel, member: str) -> MemberView | None:
    """The member as last observed (reading a view again would hand over its events)."""
    return model.last_view.members.get(member) if model.last_view else None


def observe(model: ReferenceModel, target: GroupTarget) -> tuple[GroupView, list[str]]:
    view = target.view()
    return view, model.observe(view)


def steps(model: ReferenceModel, target: GroupTarget, count: int) -> list[str]:
    """Up to ``count`` protocol steps, each observed; stops at the first violation."""
    out: list[str] = []
    for _ in range(count):
        if not target.step():
            break
        out += observe(model, target)[1]
        if out:
            break
    return out


def drain(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """Show, one by one, what a target that records on its own (the wire) logged while the
    event ran: as many steps as it had pending when asked. Other targets have nothing
    pending (they move only when stepped)."""
    pending = getattr(target, "pending", None)
    return steps(model, target, pending() if pending is not None else 0)


def after(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """What most events end with: the group observed, then what it logged meanwhile."""
    return observe(model, target)[1] or drain(model, target)


def _now_ms(target: GroupTarget) -> int:
    """The target's logical clock (the builtins), else the harness's monotonic clock (the
    wire: real clients take real time)."""
    clock = getattr(target, "clock_ms", None)
    return clock if isinstance(clock, int) else time.monotonic_ns() // 1_000_000


def _bound_now(model: ReferenceModel, target: GroupTarget, allowed: int
               ) -> SettleBound | None:
    """The time bound a settle would get now, from the target's timeouts and the
    disturbances since the last settle (None: the target states no timeouts)."""
    disturbances = Disturbances(allowed, model.abandoned, tuple(model.delayed))
    timeouts = getattr(target, "timeouts", None)
    return settle_bound(timeouts, disturbances) if isinstance(timeouts, GroupTimeouts) \
        else None


def _bound(model: ReferenceModel, target: GroupTarget, allowed: int) -> SettleBound | None:
    """This settle's time bound (`_bound_now`), and the disturbances since the last settle
    forgotten."""
    bound = _bound_now(model, target, allowed)
    model.injected_errors, model.abandoned, model.delayed = 0, 0, []
    return bound


def until(model: ReferenceModel, target: GroupTarget, done: Callable[[], bool]) -> list[str]:
    """Protocol steps, each observed, until ``done()`` or an idle group, for no longer than
    a settle would be given now (`_bound_now`; `SETTLE_BUDGET` steps on a target that states
    no timeouts): a wait that what the target's clients do must end. The violations seen on
    the way do not end it (a replay may look for a later one); they are returned."""
    bound = _bound_now(model, target, MAX_SETTLE_GENERATIONS + model.injected_errors)
    started = _now_ms(target)
    out: list[str] = []
    for _ in range(SETTLE_BUDGET if bound is None else SETTLE_STEP_CAP):
        if done() or (bound is not None and _past(bound, started, _now_ms(target))):
            break
        if not target.step(_left(bound, started, _now_ms(target))):
            break
        out += observe(model, target)[1]
    return out


def _late(bound: SettleBound, started_ms: int, now_ms: int) -> str:
    return (f"I11: not settled after {now_ms - started_ms} ms; the bound is {bound.ms} ms = "
            f"{bound.derivation}")


def _past(bound: SettleBound, started_ms: int, now_ms: int) -> bool:
    """The settle has taken longer than its time bound."""
    return now_ms - started_ms > bound.ms


def _left(bound: SettleBound | None, started_ms: int, now_ms: int) -> int | None:
    """How long a step may wait for the group: what is left of the bound (a wait past it
    could only end in I11)."""
    return None if bound is None else max(bound.ms - (now_ms - started_ms), 0) + 1


def settle(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """I11: with no membership change the group settles within a bounded number of
    rebalances (``MAX_SETTLE_GENERATIONS``, one more for each error injected since the last
    settle; a group past them and still unsettled fails at once), and, on a target that
    states its timeouts, within the time `settle_bound` derives from them (logical time on
    a target with a clock, ``SETTLE_STEP_CAP`` steps at most; a target of real clients
    waits for its group no longer than the bound leaves), else within ``SETTLE_BUDGET``
    protocol steps."""
    allowed = MAX_SETTLE_GENERATIONS + model.injected_errors
    bound = _bound(model, target, allowed)
    start, _ = observe(model, target)
    started = _now_ms(target)
    budget = SETTLE_BUDGET if bound is None else SETTLE_STEP_CAP
    out: list[str] = []
    for _ in range(budget):
        view, problems = observe(model, target)
        out += problems
        if out or view.settled:
            break
        if view.generation - start.generation > allowed:
            model.judge("I11")
            return out + [f"I11: not settled after {view.generation - start.generation} "
                          f"rebalances (at most {allowed} allowed)"]
        if bound is not None and _past(bound, started, _now_ms(target)):
            model.judge("I11")
            return out + [_late(bound, started, _now_ms(target))]
        if not target.step(_left(bound, started, _now_ms(target))):
            view, problems = observe(model, target)
            out += problems
            if not view.settled and not out:
                out.append(_late(bound, started, _now_ms(target))
                           if bound is not None and _past(bound, started, _now_ms(target))
                           else "I11: the group is idle but not settled")
            break
    else:
        model.judge("I11")
        return out + [f"I11: not settled after {budget} protocol steps"]
    model.judge("I11")
    end = model.last_view or start
    if end.settled and end.generation - start.generation > allowed:
        out.append(f"I11: settling took {end.generation - start.generation} rebalances "
                   f"(at most {allowed} allowed)")
    elif end.settled and bound is not None and _past(bound, started, _now_ms(target)):
        out.append(_late(bound, started, _now_ms(target)).replace("not settled", "settled only"))
    return out


def subscribed(model: ReferenceModel, target: GroupTarget, member: str,
               topics: tuple[str, ...]) -> list[str]:
    """I9 for a member that changes its subscription: it keeps what it may keep."""
    before = last_seen(model, member)
    target.subscribe(member, topics)
    model.subscribed(member, topics)
    view, out = observe(model, target)
    after_view = view.members.get(member)
    if before is not None and after_view is not None:
        model.judge("I9")
        out += [f"{member}: {v}" for v in M.subscription_change(set(before.owned),
                                                                set(after_view.owned))]
    return out


def unsubscribed(model: ReferenceModel, target: GroupTarget, member: str) -> list[str]:
    """I9 for a member that unsubscribes (KIP-70): it commits, releases, leaves."""
    before = last_seen(model, member)
    consumed = set(model.members[member].consumed)
    target.unsubscribe(member)
    model.unsubscribed(member)
    view = target.view()
    out = model.observe(view)
    after_view = view.members.get(member)
    if before is not None and after_view is not None:
        model.judge("I9")
        released = {tp for cb in view.callbacks if cb.member == member
                    and cb.kind in ("revoked", "lost") for tp in cb.partitions}
        out += [f"{member}: {v}" for v in M.unsubscribe(
            set(before.owned), set(after_view.owned), released, before.commits,
            after_view.commits, consumed)]
    return out


def rolled(model: ReferenceModel, target: GroupTarget, member: str) -> list[str]:
    """I11 for a member a rolling upgrade restarts: a member whose client refused to start
    with its new configuration can never rejoin; what the client said is the reason."""
    view, out = observe(model, target)
    if member in view.members:
        return out
    said = [text for who, text in view.errors if who == member] or ["no reason given"]
    model.judge("I11")
    return out + [f"I11: {member} cannot rejoin: its client refused to start ({said[0]})"]
