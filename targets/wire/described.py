"""A completed generation as the coordinator describes it (DescribeGroups), where it can.

On a backend that answers DescribeGroups (groupcheck's broker), the group read from its
coordinator while it is still Stable in the generation being shown (the same members before
and after the read: DescribeGroups names no generation) is what gets judged; bytes that
differ from the round the coordinator recorded are an error of the coordinator. On the mock
the recording proxy's round stands in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .backends.backend import Backend, GroupRound

__all__ = ["as_described", "latest_round", "newest_generation"]


def newest_generation(backend: Backend) -> int:
    """The newest generation the coordinator has formed, complete or not."""
    return max((r.generation for r in backend.rounds()), default=-1)


def latest_round(backend: Backend) -> GroupRound | None:
    """The newest generation the coordinator completed (None before the first)."""
    complete = [r for r in backend.rounds() if r.complete]
    return complete[-1] if complete else None


def as_described(backend: Backend, group: str, round_: GroupRound,
                 error: Callable[[str], None]) -> tuple[GroupRound, bool]:
    """``round_`` with the bytes the coordinator describes, and whether it described them;
    every member whose described bytes differ from the recorded ones goes to ``error``."""
    describe = getattr(backend, "describe", None)
    if describe is None or newest_generation(backend) != round_.generation:
        return round_, False
    seen = describe(group)
    ids = {m.member_id for m in seen.members}
    if seen.state != "Stable" or ids != set(round_.subscriptions) \
            or newest_generation(backend) != round_.generation:
        return round_, False  # the group moved on: the round as the coordinator recorded it
    subscriptions = {m.member_id: m.metadata or b"" for m in seen.members}
    assignments = {m.member_id: m.assignment or b"" for m in seen.members}
    for what, described, recorded in (("subscription", subscriptions, round_.subscriptions),
                                       ("assignment", assignments, round_.assignments)):
        for member_id, data in described.items():
            if recorded.get(member_id, b"") != data:
                name = round_.names.get(member_id) or member_id
                error(f"DescribeGroups gives {name}'s {what} in generation "
                      f"{round_.generation} other bytes than the coordinator took in its "
                      "rounds")
    return replace(round_, subscriptions=subscriptions, assignments=assignments,
                   protocol=seen.protocol_name or round_.protocol), True
