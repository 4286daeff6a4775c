"""What a wire group asks of its coordinator on an event's behalf, each passed to its backend
(`backends.backend`): an error answer, a late answer, a connection closed before its answer,
the coordinator moved to another node, the order of SyncGroup answers.

What lives here: `Steered`, the part of `wire_group.WireGroup` that plays those events. A
backend that cannot play one (the mock, a broker of one node for a move) raises ValueError
before anything happens.
"""

from __future__ import annotations

from collections.abc import Callable

from ...properties.harness import checked
from .backends.backend import Backend
from .members import WireMember

__all__ = ["Steered"]


class Steered:
    """The coordinator's side of a wire group's events, played by its backend."""

    backend: Backend
    members: dict[str, WireMember]
    check_harness: Callable[[], None]  # the group's own (`WireGroup.check_harness`)

    @checked
    def inject_error(self, member: str, api: str, error: str) -> set[str]:
        """Who the error may reach: the member, or on a backend that cannot aim (the mock)
        whichever member sends that request next."""
        self.backend.inject_error(api, error, member)
        return {member} if self.backend.aims_errors_at_members else set(self.members)

    @checked
    def delay_answer(self, member: str, api: str, ms: int) -> None:
        self.backend.delay_answer(api, ms / 1000.0, member)

    @checked
    def close_before_answer(self, member: str, api: str) -> None:
        self.backend.close_before_answer(api, member)

    @checked
    def move_coordinator(self, member: str, api: str) -> None:
        self.backend.move_coordinator(api, member)

    @checked
    def order_sync_answers(self, member: str, leader_first: bool) -> None:
        self.backend.order_sync_answers(member, leader_first, sorted(self.members))
