"""What an event does besides its own target call: watching the group's protocol steps, the
settle bound (I11) and the member-level checks of a subscription change (I9).

The event types (model/event_types.py) call these after acting on the target; every helper
returns the violations the reference model saw along the way.
"""

from __future__ import annotations

from ..properties import membership as M
from ..properties.group import GroupTarget, GroupView, MemberView
from .spec import ReferenceModel

__all__ = ["MAX_SETTLE_GENERATIONS", "SETTLE_BUDGET", "SETTLE_REBALANCE_TIMEOUTS",
           "SETTLE_STEP_CAP", "after", "drain", "observe", "rolled", "settle", "steps",
           "subscribed", "unsubscribed"]

#: protocol steps a ``settle`` event may take before I11 calls the group unsettled, on a
#: target without a logical clock (the wire: one step is one logged entry)
SETTLE_BUDGET = 400
#: generations a settle may add: eager needs 1 rebalance, cooperative 1 + 2 follow-ups
#: (DESIGN I11), plus one for a leader that notices new metadata; a settle also gets one
#: more for each error answer injected since the last settle (the member it reaches
#: rejoins: a rebalance no change asked for)
MAX_SETTLE_GENERATIONS = 4
#: on a target with a logical clock (``clock_ms`` and ``rebalance_timeout_ms``, the
#: builtins) the settle is bounded in logical time, not steps: each allowed rebalance may
#: wait up to a rebalance timeout for a member the coordinator still lists (one that got
#: UNKNOWN_MEMBER_ID while the coordinator kept its old id goes only at its session timeout,
#: Kafka's ``onExpireHeartbeat``), plus one more; a step count grows with the group's size
SETTLE_REBALANCE_TIMEOUTS = MAX_SETTLE_GENERATIONS + 1
#: a clocked target's steps that must move its clock; past it the group is livelocked
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


def _settle_horizon(target: GroupTarget) -> tuple[int, int] | None:
    """(clock now, clock deadline) for a target with a logical clock, else None."""
    clock = getattr(target, "clock_ms", None)
    timeout = getattr(target, "rebalance_timeout_ms", None)
    if not isinstance(clock, int) or not isinstance(timeout, int):
        return None
    return clock, clock + SETTLE_REBALANCE_TIMEOUTS * timeout


def settle(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """I11: with no membership change the group settles within a bounded number of
    rebalances (``MAX_SETTLE_GENERATIONS``, one more for each error injected since the last
    settle; a group past them and still unsettled fails at once), and within
    ``SETTLE_BUDGET`` protocol steps, or on a target with a logical clock within
    ``SETTLE_REBALANCE_TIMEOUTS`` rebalance timeouts of logical time."""
    allowed = MAX_SETTLE_GENERATIONS + model.injected_errors
    model.injected_errors = 0
    start, _ = observe(model, target)
    horizon = _settle_horizon(target)
    budget = SETTLE_BUDGET if horizon is None else SETTLE_STEP_CAP
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
        if horizon is not None and getattr(target, "clock_ms", 0) > horizon[1]:
            model.judge("I11")
            return out + [f"I11: not settled after {horizon[1] - horizon[0]} ms of logical "
                          f"time ({SETTLE_REBALANCE_TIMEOUTS} rebalance timeouts)"]
        if not target.step():
            view, problems = observe(model, target)
            out += problems
            if not view.settled and not out:
                out.append("I11: the group is idle but not settled")
            break
    else:
        model.judge("I11")
        return out + [f"I11: not settled after {budget} protocol steps"]
    model.judge("I11")
    end = model.last_view or start
    if end.settled and end.generation - start.generation > allowed:
        out.append(f"I11: settling took {end.generation - start.generation} rebalances "
                   f"(at most {allowed} allowed)")
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
