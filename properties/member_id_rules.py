"""I16, member-id hygiene: after a coordinator error a member rejoins with its member id or
without it, as its client's profile says (`ClientProfile.keeps_member_id_after`), judged by
`member_id_after_error` on what the broker saw (`ErrorResponse`, `NextJoin`).

Kafka's consumer (AbstractCoordinator, from 3.x on) gives its member id up after
UNKNOWN_MEMBER_ID (the coordinator no longer knows it) and FENCED_INSTANCE_ID (another
consumer holds its instance id), keeps it after ILLEGAL_GENERATION (the id is still valid,
only the generation is old: rejoining with it spares the group a wait for the old id) and
after REBALANCE_IN_PROGRESS (it only rejoins). Older releases gave the id up after
ILLEGAL_GENERATION too; a profile says which rule its client follows.

Several errors answered to one member id before its next join (a request in flight when the
first came back is answered too) are all answered by that join: it keeps the id only if the
profile keeps it after every one of them.

An answer the broker was steered to hold back for the member's whole session timeout or
longer, the error's own or another between the error and the next join, settles nothing
either way: the session lapsed while the member waited (the
coordinator expires an id whose heartbeats stop, and librdkafka's own session timer gives
its id up and rejoins), so keeping the id and giving it up are both right.

A member id given up without a LeaveGroup while the coordinator still holds it (an answer
the broker was steered to give) is a member left behind (`left_behind`): the coordinator
waits for it in the next join phase until its session ends; the report names how long that
join waited.
"""

from __future__ import annotations

from dataclasses import dataclass

from .membership import ClientProfile

__all__ = ["ErrorResponse", "NextJoin", "left_behind", "member_id_after_error"]


@dataclass(frozen=True)
class ErrorResponse:
    """A coordinator error a member was answered with: its client id, the member id its
    request carried, the API and error, and whether the answer was steered (the coordinator
    itself still held the id)."""

    member: str
    member_id: str
    api: str
    error: str
    steered: bool = False
    waited_ms: int | None = None  # from the request's arrival to its answer
    session_ms: int | None = None  # the member's session timeout (its last JoinGroup's)
    #: judged errors answered earlier to the same member id since the member's last join:
    #: the next join answers them too (requests in flight when the first came back)
    also: tuple[str, ...] = ()

    @property
    def session_lapsed(self) -> bool:
        """The answer was held back for the member's whole session timeout or longer."""
        return self.steered and self.waited_ms is not None and self.session_ms is not None \
            and self.waited_ms >= self.session_ms


@dataclass(frozen=True)
class NextJoin:
    """The member's next JoinGroup after that answer: the member id it carried ('' for
    none), whether a LeaveGroup for the old id came first, how long the broker took to
    answer it (ms; None: never answered), and whether an answer to the member was held back
    for its whole session timeout in between (its session lapsed before it joined)."""

    member_id: str
    left_first: bool = False
    waited_ms: int | None = None
    session_lapsed: bool = False


def member_id_after_error(answer: ErrorResponse, join: NextJoin,
                          profile: ClientProfile) -> list[str]:
    """I16 for one error answer and the member's next JoinGroup."""
    if not answer.member_id or answer.session_lapsed or join.session_lapsed:
        return []  # nothing to keep: the request had no member id, or its session lapsed
    keeps = all(e in profile.keeps_member_id_after for e in (answer.error, *answer.also))
    kept = join.member_id == answer.member_id
    said = f"after {answer.error} on {answer.api}" + (
        f" (and before it {', '.join(answer.also)})" if answer.also else "")
    if keeps and not kept:
        out = [f"I16: {answer.member} gave its member id {answer.member_id} up {said}; its "
               f"profile ({profile.name}) keeps it"]
    elif kept and not keeps:
        out = [f"I16: {answer.member} rejoined with its member id {answer.member_id} {said}; "
               f"its profile ({profile.name}) gives it up"]
    else:
        out = []
    return out


def left_behind(answer: ErrorResponse, join: NextJoin) -> str:
    """The report of a member id given up without a LeaveGroup while the coordinator still
    held it ('' for none): a figure of what the group paid, not a breach by itself (the
    client may do as its profile says; a wrong drop is `member_id_after_error`'s)."""
    if not answer.member_id or join.member_id == answer.member_id or join.left_first \
            or not answer.steered:
        return ""
    waited = "a join never answered" if join.waited_ms is None else \
        f"{join.waited_ms} ms of its next join"
    return (f"{answer.member} left its member id {answer.member_id} behind after "
            f"{answer.error} on {answer.api} (no LeaveGroup; the coordinator still held it): "
            f"it kept the group waiting {waited}")
