"""A wire group is not settled while a static member whose instance id a later consumer
took has not heard it is fenced (KIP-345): its next request is answered FENCED_INSTANCE_ID,
and I14 judges what its client then says, not an earlier error of another kind."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from groupcheck.properties.group import MemberSpec
from groupcheck.targets.wire.log import WireLog
from groupcheck.targets.wire.settle import unfenced


def _member(instance: str | None, source: int, polling: bool = True) -> Any:
    return SimpleNamespace(spec=MemberSpec(("t0",), ("range",), group_instance_id=instance),
                           source=source, polling=polling)


def _errors(*said: tuple[str, str]) -> list[Any]:
    log = WireLog(lambda _horizon: True)
    for seq, (member, text) in enumerate(said):
        log.receive(1, {"event": "error", "member": member, "seq": seq, "ts": seq,
                        "message": text})
    log.release()
    return list(log.entries)


def test_a_replaced_static_member_holds_the_group_until_it_says_it_is_fenced() -> None:
    members = {"c1": _member("i-1", 1), "c2": _member(None, 2), "c3": _member("i-1", 3)}
    topic = _errors(("c1", "RuntimeError: Subscribed topic not available: t0"))
    assert unfenced(members, topic) == "c1 has not heard it is fenced (c3 took its instance id)"
    fenced = _errors(("c1", "RuntimeError: Fatal error: Broker: Static consumer fenced by "
                            "other consumer with same group.instance.id"))
    assert unfenced(members, fenced) == ""


def test_the_twin_itself_and_a_closed_member_wait_for_nothing() -> None:
    assert unfenced({"c1": _member("i-1", 1, polling=False), "c3": _member("i-1", 3)}, []) == ""
    assert unfenced({"c1": _member("i-1", 1), "c2": _member("i-2", 2)}, []) == ""
