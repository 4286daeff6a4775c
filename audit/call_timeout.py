"""One assign call with a time limit: a hang is a liveness bug, and without a limit one
hanging scenario would stall the whole audit (``TIMEOUT`` in the chain's verdicts)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..properties.jsonl_shapes import AssignRequest

if TYPE_CHECKING:  # typeshed has no stub for ``_signal``; ``signal`` wraps the same functions
    import signal as _signal
else:
    import _signal

__all__ = ["CALL_TIMEOUT", "AssignTimeout", "call_with_timeout"]

T = TypeVar("T")

#: Seconds one assign call may take before the story stops with ``TIMEOUT``.
CALL_TIMEOUT = 5.0


_ALARM = int(getattr(signal, "SIGALRM", 14))
_REAL_TIMER = int(getattr(signal, "ITIMER_REAL", 0))


class AssignTimeout(TimeoutError):
    """An assign call took longer than `CALL_TIMEOUT`."""


def call_with_timeout(fn: Callable[[AssignRequest], T], request: AssignRequest,
                      seconds: float) -> T:
    """``fn(request)``, interrupted after ``seconds`` by SIGALRM where it can be (the main
    thread of a POSIX process: Spark's Python workers run the function there)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer"):
        return fn(request)

    def expired(signum: int, frame: Any) -> None:
        raise AssignTimeout(f"assign did not answer within {seconds:g}s")

    # the C functions of ``_signal``: ``signal.signal`` converts numbers and handlers to and
    # from enums on every call, a few percent of a small scenario's time
    previous = _signal.signal(_ALARM, expired)
    _signal.setitimer(_REAL_TIMER, seconds)
    try:
        return fn(request)
    finally:
        _signal.setitimer(_REAL_TIMER, 0)
        _signal.signal(_ALARM, previous)
