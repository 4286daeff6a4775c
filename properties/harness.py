"""groupcheck's own failures, told apart from a client's: `HarnessError`, `ThreadFailure` and
`Failures`, the record a harness object keeps of the threads it owns.

A check runs real clients on threads and processes of the harness: a steering thread of
the broker backend, a driver process's readers, the broker's event loop, the mock's proxy.
When one of them raises, what the run observes from then on is the harness's fault, not the
client's, so no verdict may be drawn from it. The object that owns such a thread runs it
under `Failures.guard`, which keeps the exception (type, message, traceback text); the next
call into the target raises it as a `HarnessError`, and every engine lets that error
through: it is never a finding, never shrunk, never saved as a counterexample.

It lives on the lowest floor because every floor above meets it: the broker and the targets
record and raise it, the model's state machine and the engines let it pass.
"""

from __future__ import annotations

import functools
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

__all__ = ["Checked", "Failures", "HarnessError", "ThreadFailure", "checked"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class HarnessError(RuntimeError):
    """groupcheck's own machinery failed; what the run saw since proves nothing about the
    client. ``thread``: where it failed; ``traceback_text``: the failure's traceback."""

    def __init__(self, message: str, *, thread: str = "", traceback_text: str = "") -> None:
        super().__init__(message)
        self.thread = thread
        self.traceback_text = traceback_text


@dataclass(frozen=True)
class ThreadFailure:
    """One exception a harness thread raised: where, what, and its whole traceback."""

    thread: str
    kind: str
    message: str
    traceback_text: str
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, thread: str, exc: BaseException) -> ThreadFailure:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(thread, type(exc).__name__, str(exc), text, exc)

    def error(self) -> HarnessError:
        """The error the next call into the target raises (caused by the original)."""
        first = self.message.splitlines()[0] if self.message else ""
        err = HarnessError(f"groupcheck's own {self.thread} thread failed: {self.kind}: "
                           f"{first}", thread=self.thread, traceback_text=self.traceback_text)
        err.__cause__ = self.exception
        return err


class Failures:
    """The failures of the threads one object owns, in the order they came (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[ThreadFailure] = []

    def record(self, thread: str, exc: BaseException) -> ThreadFailure:
        failure = ThreadFailure.of(thread, exc)
        with self._lock:
            self._items.append(failure)
        return failure

    @property
    def first(self) -> ThreadFailure | None:
        with self._lock:
            return self._items[0] if self._items else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def all(self) -> list[ThreadFailure]:
        """Every failure so far, in the order they came."""
        with self._lock:
            return list(self._items)

    def check(self) -> None:
        """Raise the first failure as a `HarnessError` (nothing when there is none)."""
        first = self.first
        if first is not None:
            raise first.error()

    def guard(self, thread: str, run: Callable[..., Any]) -> Callable[..., None]:
        """``run`` as a thread's target: whatever it raises is recorded under ``thread``
        instead of dying on the thread's excepthook."""
        def guarded(*args: Any, **kwargs: Any) -> None:
            try:
                run(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - recorded, raised by the owner's next call
                self.record(thread, exc)
        return guarded


class Checked(Protocol):
    def check_harness(self) -> None: ...  # raises `HarnessError` once a thread failed


_C = TypeVar("_C", bound=Checked)


def checked(method: Callable[Concatenate[_C, _P], _R]) -> Callable[Concatenate[_C, _P], _R]:
    """A call into a target that first raises what failed in the harness since (the
    target's `check_harness`), so that nothing runs, and nothing is judged, on a harness
    that already broke."""
    @functools.wraps(method)
    def call(self: _C, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        self.check_harness()
        return method(self, *args, **kwargs)
    return call
