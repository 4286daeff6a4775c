"""Worker process pools that a Ctrl-C ends cleanly.

A terminal's Ctrl-C sends SIGINT to every process of the foreground group: the command and
each of its workers. Only the command should answer it (exit 130, one line). So a worker
made here ignores SIGINT, and when the command is interrupted while its pool runs, the
pool's workers are terminated at once instead of being waited for, its queued work is
cancelled, and its manager thread is waited for (it ends as soon as it sees its workers gone).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

__all__ = ["ignore_interrupts", "worker_pool"]


def ignore_interrupts() -> None:
    """A worker's initializer: SIGINT is the command's to answer, not the worker's."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def worker_pool(workers: int, method: str) -> Iterator[ProcessPoolExecutor]:
    """A process pool of `workers` started by `method` ('spawn', 'forkserver'); on
    KeyboardInterrupt its work is cancelled and its workers terminated before it re-raises."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method),
                               initializer=ignore_interrupts)
    try:
        yield pool
    except KeyboardInterrupt:
        for child in multiprocessing.active_children():
            child.terminate()
        # the pool's manager thread sees its workers gone and ends; waiting for it here
        # keeps it from closing its wake-up pipe while the interpreter's exit hook writes
        # to it (an "Exception ignored" traceback on Python 3.11)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
