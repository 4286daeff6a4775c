"""The harness's end of the member-driver contract: one child process speaking JSON lines.

A member driver (``docs/reference/member-driver-contract.md``) hosts consumers of one client
library. `DriverProcess` starts it, sends commands (``{"id": n, "cmd": ...}``) and waits, with a
deadline, for their acks; every unsolicited event line goes to the callback the owner gave, on
the reader thread, in the order the driver wrote them. Theory of operation: one reader thread
per driver parses stdout (an ack wakes the caller waiting on that id; anything else is an
event), one more keeps the last lines of stderr for error messages. A driver that exits, writes
a line that is not a JSON object, or does not answer within its command's `bound` makes the waiting
call raise `DriverError` naming the driver and its last stderr lines — never a hang. Both
are harness errors (`properties.harness`): a driver that breaks the contract, and a reader
thread of ours that raises (kept in `failures`, the driver then counts as broken). Nothing
here knows any client: the shipped drivers and a user's own are started alike.
"""

from __future__ import annotations

import collections
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from ...properties.harness import Failures, HarnessError
from .drivers.messages import Ack, DriverEvent
from .forked import launch

__all__ = ["CLOSE_TIMEOUT", "COMMAND_TIMEOUT", "SHUTDOWN_TIMEOUT", "STDERR_LINES",
           "CommandFailed", "DriverError", "DriverProcess", "bound"]

COMMAND_TIMEOUT = 60.0  # seconds a command may take before the driver counts as hung
#: a ``close`` may take what the client documents for it: Java's close bounds itself by 30 s,
#: but a revoke callback it runs may commit with commitSync, bounded by default.api.timeout.ms
#: (60 s) — so close's bound is their sum, with the usual margin of a command on top
CLOSE_TIMEOUT = 30.0 + 60.0 + 15.0
SHUTDOWN_TIMEOUT = 15.0
EXIT_WAIT = 1.0  # seconds a driver whose stdout reached EOF has to be seen exiting
READ_SIZE = 65536
MAX_LINE = 16 * 1024 * 1024  # a longer line breaks the contract (memory stays bounded)
STDERR_LINES = 40

def bound(cmd: str) -> float:
    """Seconds the harness waits for ``cmd``'s ack before the driver counts as hung."""
    return CLOSE_TIMEOUT if cmd == "close" else COMMAND_TIMEOUT


class DriverError(HarnessError):
    """The driver failed the contract: it exited, hung, or wrote something unreadable (the
    harness can no longer see the client, so nothing after it is judged)."""


class CommandFailed(RuntimeError):
    """The driver answered a command with an error (the client call raised)."""


class DriverProcess:
    """One running member driver; `call` sends a command and returns its ack."""

    def __init__(self, argv: Sequence[str], label: str,
                 on_event: Callable[[DriverProcess, DriverEvent], None],
                 env: dict[str, str] | None = None) -> None:
        self.label = label
        self.on_event = on_event
        self.proc = launch(argv, {**os.environ, **(env or {})})
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._acks: dict[int, Ack] = {}
        self._unawaited: set[int] = set()  # commands `tell` sent: their acks are dropped
        self._cond = threading.Condition()
        self._next_id = 0
        self._broken = ""  # why the driver can no longer be talked to
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._partial = self._undelivered = 0  # bytes of a line begun, lines not handed on
        self._handed_ts = -1  # the latest stamp of an event handed on (`drained`)
        self.failures = Failures()  # of its reader threads (the events' sink included)
        self._threads = [
            threading.Thread(target=self._guarded("stdout", self._read_stdout), daemon=True,
                             name=f"driver-{label}-stdout"),
            threading.Thread(target=self._guarded("stderr", self._read_stderr), daemon=True,
                             name=f"driver-{label}-stderr")]
        for thread in self._threads:
            thread.start()

    # --- the reader threads -------------------------------------------------------------

    def _guarded(self, stream: str, read: Callable[[], None]) -> Callable[[], None]:
        """A reader that raises is recorded (`failures`) and breaks the driver, so that no
        call waits out its timeout for an answer the dead reader would have handed on."""
        def run() -> None:
            try:
                read()
            except Exception as exc:  # noqa: BLE001 - recorded: the owner's next call raises it
                self.failures.record(f"driver {self.label} {stream} reader", exc)
                self._break(f"its {stream} reader failed ({type(exc).__name__}: {exc})")
        return run

    def _read_stdout(self) -> None:
        """Read whole lines as they come; what is read and not yet handed on is counted
        (`drained`), under the lock the count is checked with."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        readable = select.poll()
        readable.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        partial, chunk = bytearray(), b"-"
        while chunk:
            readable.poll()  # until the pipe has data or is closed (no lock held)
            with self._read_lock:
                try:
                    chunk = os.read(fd, READ_SIZE)
                except OSError:  # the harness closed the pipe under a stuck reader
                    chunk = b""
                lines: list[bytes] = []
                if b"\n" in chunk or not chunk:  # a line ends (or the stream does)
                    lines = (bytes(partial) + chunk).split(b"\n")
                    partial = bytearray(lines.pop() if chunk else b"")
                else:
                    partial += chunk  # a long line grows in place, not by copies
                self._partial, self._undelivered = len(partial), len(lines)
            if len(partial) > MAX_LINE:
                self._break(f"wrote a line longer than {MAX_LINE} bytes")
                return
            for raw in lines:
                handed = self._hand_on(raw)
                with self._read_lock:  # a broken driver has nothing more on its way
                    self._undelivered = self._undelivered - 1 if handed else 0
                if not handed:
                    return
        try:  # EOF: the driver died, or closed its stdout and cannot answer any more
            self._break(f"exited (code {self.proc.wait(EXIT_WAIT)})")
        except subprocess.TimeoutExpired:
            self._break("closed its stdout")

    def _hand_on(self, raw: bytes) -> bool:
        """One line: an ack wakes its caller, anything else is an event; False for a line
        that breaks the contract."""
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return True
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._break(f"wrote a line that is not a JSON object: {line[:200]!r}")
            return False
        # a JSON object: its reader converts (and checks) whatever it takes from it
        if "ack" in message and "event" not in message:
            with self._cond:
                number = int(message["ack"])
                if number in self._unawaited:
                    self._unawaited.discard(number)
                else:
                    self._acks[number] = cast(Ack, message)
                    self._cond.notify_all()
        else:
            self.on_event(self, cast(DriverEvent, message))
            stamp = message.get("ts")
            if isinstance(stamp, int) and stamp > self._handed_ts:
                self._handed_ts = stamp  # after it was handed on: `drained` may count on it
        return True

    def drained(self, horizon: int | None = None) -> bool:
        """Whether every line the driver has written so far has been handed on: nothing
        in its pipe, nothing read and not yet passed to ``on_event``; or, given a
        ``horizon`` (CLOCK_MONOTONIC ns), whether every line it stamped before then has:
        an event stamped at or after it has been handed on (a driver stamps and writes in
        one order, so a driver that never stops writing is not waited for). A line a driver
        writes before it acts (a callback's end before its client rejoins) is thus handed on
        before anything that act caused can be."""
        if horizon is not None and self._handed_ts >= horizon:
            return True
        with self._read_lock:
            if self._undelivered or self._partial:
                return False
            try:
                waiting = fcntl.ioctl(self.proc.stdout.fileno(),  # type: ignore[union-attr]
                                      termios.FIONREAD, b"\0\0\0\0")
            except (OSError, ValueError):  # closed: nothing more will come
                return True
            return int.from_bytes(waiting, sys.byteorder) == 0

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _break(self, why: str) -> None:
        with self._cond:
            if not self._broken:
                self._broken = why
            self._cond.notify_all()

    # --- commands -------------------------------------------------------------------------

    def describe(self, why: str) -> str:
        tail = " | ".join(list(self.stderr)[-5:])
        return f"driver {self.label} {why}" + (f"; stderr: {tail}" if tail else "")

    def send(self, cmd: str, **fields: Any) -> int:
        """Write one command; returns its id (see `wait`)."""
        return self._send(cmd, True, **fields)

    def _send(self, cmd: str, awaited: bool, **fields: Any) -> int:
        with self._write_lock:
            self._next_id += 1
            number = self._next_id
            if not awaited:  # noted before it is written: its ack cannot come first
                with self._cond:
                    self._unawaited.add(number)
            line = json.dumps({"id": number, "cmd": cmd, **fields}) + "\n"
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                self._break(f"cannot be written to ({exc})")
        return number

    def tell(self, cmd: str, **fields: Any) -> None:
        """Write one command whose answer nobody waits for (its ack is dropped)."""
        self._send(cmd, False, **fields)

    def wait(self, number: int, cmd: str, timeout: float = COMMAND_TIMEOUT) -> Ack:
        """The ack of command ``number``; raises `CommandFailed` on an error answer."""
        with self._cond:
            self._cond.wait_for(lambda: number in self._acks or bool(self._broken), timeout)
            ack = self._acks.pop(number, None)
            if ack is None:
                self.failures.check()  # the harness's reader failed, not the driver
                raise DriverError(self.describe(self._broken or
                                                f"did not answer {cmd} in {timeout:.0f}s"))
        if ack.get("error"):
            raise CommandFailed(f"{cmd}: {ack['error']}")
        return ack

    def call(self, cmd: str, timeout: float | None = None, **fields: Any) -> Ack:
        """Send and wait; the bound is ``timeout``, else the command's own (`bound`)."""
        return self.wait(self.send(cmd, **fields), cmd, bound(cmd) if timeout is None else timeout)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None and not self._broken

    @property
    def broken(self) -> str:
        """Why the driver can no longer be talked to ('' while it can)."""
        if self._broken:
            return self._broken
        code = self.proc.poll()
        return "" if code is None else f"exited (code {code})"

    def kill(self) -> None:
        """SIGKILL the driver's whole process group: its consumers vanish without a word."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:  # stuck in the kernel: nothing more to do
            pass

    def close(self) -> None:
        """``shutdown``, then wait (bounded); a driver that does not exit is killed."""
        if self.alive:
            try:
                self.call("shutdown", timeout=SHUTDOWN_TIMEOUT)
            except (DriverError, CommandFailed):
                pass
            try:
                self.proc.wait(SHUTDOWN_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        for thread in self._threads:  # they end at the streams' EOF, now that it is dead
            thread.join(SHUTDOWN_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
