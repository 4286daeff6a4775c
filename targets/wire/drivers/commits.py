"""The commit styles on the drivers' side: which style a ``create`` asks for, whether the
driver offers it, and the ``commit`` events a member's commits become.

A style is what an application does with its client (``docs/reference/member-driver-contract.md``,
"Commit styles"): ``none`` never commits, ``auto`` lets the client's auto-commit run, ``sync``
commits the current positions synchronously after each poll that returned records, ``async``
does the same with the client's asynchronous commit, ``revoke`` commits synchronously inside
its revoke callback. `Commits` writes one ``commit`` event per outcome the client reports; a
commit that committed nothing (no positions yet) writes nothing, as the clients then send no
OffsetCommit. Like `host`, this module runs on the client's own interpreter (Python 3.9+).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from .messages import COMMIT_STYLES, DEFAULT_COMMIT_STYLE, Command, DriverConfig, EventFields

if TYPE_CHECKING:  # Unpack is Python 3.11's; the drivers run on 3.9
    from typing import Unpack

__all__ = ["OK", "Commits", "EventWriter", "Record", "auto_commit", "failure",
           "offered", "refusal", "style_of"]

Record = tuple[str, int, int]  # a record handed, or an offset committed: topic, partition, offset

OK = "ok"


def offered(asynchronous: bool) -> list[str]:
    """The styles of a client with a revoke callback: every one, less ``async`` without a
    distinct asynchronous commit."""
    return [s for s in COMMIT_STYLES if asynchronous or s != "async"]


def style_of(command: Command) -> str:
    """A ``create``'s commit style (absent: ``none``)."""
    return str((command.get("config") or {}).get("commit_style") or DEFAULT_COMMIT_STYLE)


def refusal(command: Command, styles: list[str]) -> str | None:
    """Why a ``create`` cannot be served: a commit style the driver does not offer."""
    style = style_of(command)
    if style in styles:
        return None
    return f"commit style {style!r} is not offered by this driver (it offers {', '.join(styles)})"


def auto_commit(config: DriverConfig) -> tuple[bool, int | None]:
    """Whether auto-commit is on, and its interval when the harness sent one."""
    interval = config.get("auto_commit_interval_ms")
    return bool(config.get("enable_auto_commit", False)), \
        None if interval is None else int(interval)


def failure(exc: BaseException) -> str:
    """A client's error as a commit's outcome."""
    return f"{type(exc).__name__}: {exc}"


class EventWriter(Protocol):
    """Where events go (`host.DriverOutput`)."""

    def event(self, name: str, member: str, **fields: Unpack[EventFields]) -> None: ...


class Commits:
    """One member's commit reports: ``commit`` events in its style."""

    def __init__(self, out: EventWriter, member: str, style: str,
                 generation: Callable[[], int | None]) -> None:
        self.out, self.member, self.style, self.generation = out, member, style, generation

    def report(self, offsets: Iterable[Record], outcome: str) -> None:
        """One commit's outcome; nothing when it committed no offset."""
        self.report_at(offsets, outcome, self.generation())

    def report_at(self, offsets: Iterable[Record], outcome: str, generation: int | None) -> None:
        """`report`, with the generation the caller read (where the client cannot be asked)."""
        committed = sorted(offsets)
        if committed:
            self.out.event("commit", self.member, style=self.style,
                           offsets=[list(r) for r in committed], outcome=outcome,
                           generation=generation)

    def sync(self, positions: Callable[[], list[Record]],
             commit: Callable[[], list[Record] | None]) -> None:
        """A synchronous commit of the current positions, reported once the call returned or
        raised. ``commit`` returns what it committed when the client says so (else None:
        the positions were committed)."""
        before = positions()
        if not before:
            return
        try:
            committed = commit()
        except Exception as exc:  # noqa: BLE001 - the client's error is the outcome
            self.report(before, failure(exc))
            return
        self.report(before if committed is None else committed, OK)
