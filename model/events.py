"""Domain events: the one vocabulary shared by the state machine, replay files and stories.

An event is a small JSON object, e.g. ``{"op": "join", "member": "c1", "topics": ["t0"],
"assignors": ["sticky"]}``. `apply_event` performs it on a target, keeps the reference
model in step, and returns the violations the model sees along the way (protocol steps are
observed one by one). Replay is nothing but `apply_event` over a saved list.
"""

from __future__ import annotations

from typing import Any

from ..properties import membership as M
from ..properties.group import GroupTarget, GroupView, MemberSpec, MemberView, TopicPartition
from .spec import ReferenceModel

__all__ = ["MAX_SETTLE_GENERATIONS", "SETTLE_BUDGET", "SETTLE_REBALANCE_TIMEOUTS",
           "SETTLE_STEP_CAP", "Event", "apply_event"]

Event = dict[str, Any]

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


def _parts(raw: Any) -> tuple[TopicPartition, ...]:
    return tuple((str(t), int(p)) for t, p in raw)


def spec_of(event: Event) -> MemberSpec:
    return MemberSpec(
        topics=tuple(event["topics"]),
        assignors=tuple(event["assignors"]),
        profile=event.get("profile", "kip"),
        subscription_version=int(event.get("subscription_version", 3)),
        user_data_version=int(event.get("user_data_version", 1)),
        group_instance_id=event.get("group_instance_id"),
        cooperative_user_data=bool(event.get("cooperative_user_data", True)),
        client=event.get("client"),
    )


def _last(model: ReferenceModel, member: str) -> MemberView | None:
    """The member as last observed (reading a view again would hand over its events)."""
    return model.last_view.members.get(member) if model.last_view else None


def _observe(model: ReferenceModel, target: GroupTarget) -> tuple[GroupView, list[str]]:
    view = target.view()
    return view, model.observe(view)


def _steps(model: ReferenceModel, target: GroupTarget, count: int) -> list[str]:
    out: list[str] = []
    for _ in range(count):
        if not target.step():
            break
        out += _observe(model, target)[1]
        if out:
            break
    return out


def _drain(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """Show, one by one, what a target that records on its own (the wire) logged while the
    event ran: as many steps as it had pending when asked. Other targets have nothing
    pending (they move only when stepped)."""
    pending = getattr(target, "pending", None)
    return _steps(model, target, pending() if pending is not None else 0)


def _settle_horizon(target: GroupTarget) -> tuple[int, int] | None:
    """(clock now, clock deadline) for a target with a logical clock, else None."""
    clock = getattr(target, "clock_ms", None)
    timeout = getattr(target, "rebalance_timeout_ms", None)
    if not isinstance(clock, int) or not isinstance(timeout, int):
        return None
    return clock, clock + SETTLE_REBALANCE_TIMEOUTS * timeout


def _settle(model: ReferenceModel, target: GroupTarget) -> list[str]:
    """I11: with no membership change the group settles within a bounded number of
    rebalances (``MAX_SETTLE_GENERATIONS``, one more for each error injected since the last
    settle; a group past them and still unsettled fails at once), and within
    ``SETTLE_BUDGET`` protocol steps, or on a target with a logical clock within
    ``SETTLE_REBALANCE_TIMEOUTS`` rebalance timeouts of logical time."""
    allowed = MAX_SETTLE_GENERATIONS + model.injected_errors
    model.injected_errors = 0
    start, _ = _observe(model, target)
    horizon = _settle_horizon(target)
    budget = SETTLE_BUDGET if horizon is None else SETTLE_STEP_CAP
    out: list[str] = []
    for _ in range(budget):
        view, problems = _observe(model, target)
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
            view, problems = _observe(model, target)
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


def _subscribe(model: ReferenceModel, target: GroupTarget, event: Event) -> list[str]:
    member = event["member"]
    before = _last(model, member)
    target.subscribe(member, tuple(event["topics"]))
    model.subscribed(member, tuple(event["topics"]))
    view, out = _observe(model, target)
    after = view.members.get(member)
    if before is not None and after is not None:
        model.judge("I9")
        out += [f"{member}: {v}" for v in M.subscription_change(set(before.owned),
                                                                set(after.owned))]
    return out


def _unsubscribe(model: ReferenceModel, target: GroupTarget, event: Event) -> list[str]:
    member = event["member"]
    before = _last(model, member)
    consumed = set(model.members[member].consumed)
    target.unsubscribe(member)
    model.unsubscribed(member)
    view = target.view()
    out = model.observe(view)
    after = view.members.get(member)
    if before is not None and after is not None:
        model.judge("I9")
        released = {tp for cb in view.callbacks if cb.member == member
                    and cb.kind in ("revoked", "lost") for tp in cb.partitions}
        out += [f"{member}: {v}" for v in M.unsubscribe(
            set(before.owned), set(after.owned), released, before.commits, after.commits,
            consumed)]
    return out


def _may_join(model: ReferenceModel, event: Event) -> bool:
    """A join needs a free name and one assignor in common with every member; the harness
    does not drive groups into INCONSISTENT_GROUP_PROTOCOL (a configuration error), except in
    a rolling upgrade (``"rolling": true``), played as its users would play it."""
    if event["member"] in model.members:
        return False
    if event.get("rolling"):
        return True
    wanted = set(event["assignors"])
    specs = [m.spec for m in model.members.values()] + model.crashed
    return all(wanted & set(spec.assignors) for spec in specs)


def apply_event(event: Event, target: GroupTarget, model: ReferenceModel) -> list[str]:
    """Perform one event on the target and the model; return what the model objects to."""
    op = event["op"]
    member = event.get("member", "")
    if member and op != "join" and member not in model.members:
        return []  # a member that is gone (a shrunk list may drop its join): nothing happens
    if op == "join" and not _may_join(model, event):
        return []
    if op == "join":
        spec = spec_of(event)
        target.join(member, spec)
        model.joined(member, spec)
        if event.get("rolling"):
            return _rolled(model, target, member) or _drain(model, target)
    elif op == "leave":
        target.leave(member)
        model.left(member)
    elif op == "crash":
        target.crash(member)
        model.crashed_member(member)
    elif op == "stall":
        target.stall(member)
    elif op == "wake":
        target.wake(member)
    elif op == "subscribe":
        return _subscribe(model, target, event) or _drain(model, target)
    elif op == "unsubscribe":
        return _unsubscribe(model, target, event)
    elif op == "partitions":
        target.set_partitions(event["topic"], int(event["count"]))
        model.metadata(event["topic"], int(event["count"]))
    elif op == "delete_topic":
        target.delete_topic(event["topic"])
        model.metadata(event["topic"], None)
    elif op == "pause":  # a target that shows its pause calls in order tells the model then
        target.pause(member, _parts(event["partitions"]))
        if not getattr(target, "shows_pause_calls", False):
            model.paused(member, _parts(event["partitions"]))
    elif op == "resume":
        target.resume(member, _parts(event["partitions"]))
        if not getattr(target, "shows_pause_calls", False):
            model.resumed(member, _parts(event["partitions"]))
    elif op == "error":  # the target says whom it may reach (the mock: anyone's next)
        reached = target.inject_error(member, event["api"], event["error"])
        model.error_answered(set(reached) if reached else {member}, event["error"],
                             bool(getattr(target, "tells_errors", False)))
    elif op == "rejoin":
        rejoin = getattr(target, "enforce_rebalance", None)
        if rejoin is None:
            raise ValueError(f"{target.name} cannot make a member rejoin")
        rejoin(member)
    elif op in ("delay", "sync_order"):
        _steer(target, event)
    elif op == "slow_revoke":
        slow = getattr(target, "slow_revoke", None)
        if slow is None:
            raise ValueError(f"{target.name} cannot slow down a revoke callback")
        slow(member)
    elif op == "idle":
        idle = getattr(target, "idle", None)
        if idle is None:
            raise ValueError(f"{target.name} cannot sit idle on a wall clock")
        idle(int(event["ms"]))
    elif op == "produce":
        target.produce(event["topic"], int(event["partition"]))
    elif op == "poll":
        return _steps(model, target, int(event.get("steps", 1)))
    elif op == "settle":
        return _settle(model, target)
    else:
        raise ValueError(f"unknown event op {op!r}")
    return _observe(model, target)[1] or _drain(model, target)


def _rolled(model: ReferenceModel, target: GroupTarget, member: str) -> list[str]:
    """I11 for a member a rolling upgrade restarts: a member whose client refused to start
    with its new configuration can never rejoin; what the client said is the reason."""
    view, out = _observe(model, target)
    if member in view.members:
        return out
    said = [text for who, text in view.errors if who == member] or ["no reason given"]
    model.judge("I11")
    return out + [f"I11: {member} cannot rejoin: its client refused to start ({said[0]})"]


def _steer(target: Any, event: Event) -> None:
    """A late answer or an order of SyncGroup answers: only a wire target's backend can."""
    if event["op"] == "delay":
        late = getattr(target, "delay_answer", None)
        if late is None:
            raise ValueError(f"{target.name} cannot answer late")
        late(event["member"], event["api"], int(event["ms"]))
        return
    order = getattr(target, "order_sync_answers", None)
    if order is None:
        raise ValueError(f"{target.name} cannot order SyncGroup answers")
    order(event["member"], bool(event["leader_first"]))
