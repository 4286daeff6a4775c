"""Member drivers forked from a warm interpreter instead of started cold.

A Python member driver spends most of its start importing its client (kafka-python: 0.13 CPU
seconds, about what its member then uses in a fault point's whole story). `ForkServer` starts
``drivers/forkserver`` once per driver command — the same interpreter, path and environment
the driver would have had — and each launch after that is a fork of it: a process of its own,
with pipes of its own and a session of its own, killed alone by `os.killpg` as a started one
is. `ForkedProcess` is the harness's handle on one, the part of `subprocess.Popen`
`DriverProcess` uses (``pid``, the three streams, ``poll``, ``wait``); its exit code comes
from the server, which reaped it.

`launch` is what `DriverProcess` calls: a fork when ``argv`` runs a module the fork server
can host (``python -m <driver>``), else a plain `subprocess.Popen`. A server that cannot start
(no ``socket.send_fds`` on the client's Python, its client missing) or that died makes the
launch a plain start too, so a fork server only ever saves time: it changes nothing a driver
does.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import IO, Protocol, cast

from .drivers.forkserver import EnvDifference, Exited, Launch, Launched, ServerMessage

__all__ = ["ChildProcess", "ForkServer", "ForkedProcess", "launch"]

SERVER_MODULE = "groupcheck.targets.wire.drivers.forkserver"
DRIVER_PREFIX = "groupcheck.targets.wire.drivers."
READY_TIMEOUT = 60.0  # seconds a server may take to import its client
LAUNCH_TIMEOUT = 15.0
MESSAGE = 65536
SWITCH = "GROUPCHECK_FORK_DRIVERS"  # "0": start every driver, fork none
ORPHAN_CHECK = 0.5  # seconds between looks at a child whose server died


class ChildProcess(Protocol):
    """What `DriverProcess` needs of a child: `subprocess.Popen`'s part it uses."""

    pid: int
    stdin: IO[bytes] | None
    stdout: IO[bytes] | None
    stderr: IO[bytes] | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class ForkedProcess:
    """A driver the fork server forked: its pipes are ours, its exit code the server's."""

    def __init__(self, pid: int, streams: tuple[IO[bytes], IO[bytes], IO[bytes]],
                 server: ForkServer) -> None:
        self.pid = pid
        self.stdin: IO[bytes] | None = streams[0]
        self.stdout: IO[bytes] | None = streams[1]
        self.stderr: IO[bytes] | None = streams[2]
        self.returncode: int | None = None
        self._exited = threading.Event()
        self._lock = threading.Lock()
        self._server = server
        try:  # readable once the child has ended, whoever reaps it
            self._pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:  # already ended and reaped: its server says how
            self._pidfd = None

    def exited(self, code: int) -> None:
        with self._lock:  # the server's reader and a waiter may both see the end
            if self.returncode is None:
                self.returncode = code
                if self._pidfd is not None:
                    os.close(self._pidfd)
                self._exited.set()

    def poll(self) -> int | None:
        if self.returncode is None and self._server.lost:
            self._orphaned()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._exited.wait(_slice(deadline)):
            if self._server.lost and self._orphaned() is not None:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"forked driver {self.pid}", timeout or 0.0)
        return cast(int, self.returncode)

    def _orphaned(self) -> int | None:
        """The server died: whether the child has ended is all there is to know (code -1)."""
        with self._lock:
            ended = self.returncode is not None or self._pidfd is None or bool(
                select.select([self._pidfd], [], [], 0)[0])
        if ended:
            self.exited(-1)
        return self.returncode


def _slice(deadline: float | None) -> float:
    """How long one wait for an exit blocks: a server's death is looked for between them."""
    return ORPHAN_CHECK if deadline is None else max(0.0, min(ORPHAN_CHECK,
                                                              deadline - time.monotonic()))


class ForkServer:
    """One warm interpreter for one driver command; `launch` forks a driver from it."""

    def __init__(self, argv: Sequence[str], env: dict[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        module = argv[-1]
        command = [*argv[:-1], SERVER_MODULE, module, str(theirs.fileno())]
        self.env = dict(env)
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, pass_fds=[theirs.fileno()], env=env,
            start_new_session=True)
        theirs.close()
        self._channel = ours
        self._lock = threading.Lock()
        self._children: dict[int, ForkedProcess] = {}
        self._launched: dict[int, int] = {}  # launch token → pid
        self._early: dict[int, int] = {}  # pid → exit code, of a child exited before it was kept
        self._answered = threading.Condition(self._lock)
        self._tokens = 0
        self.lost = False
        ready, _, _ = select.select([ours], [], [], READY_TIMEOUT)
        hello = json.loads(ours.recv(MESSAGE) or b"{}") if ready else {}
        if "ready" not in hello:
            self.close()
            raise OSError(f"fork server for {module} did not start")
        threading.Thread(target=self._read, daemon=True, name=f"forkserver-{module}").start()

    def _read(self) -> None:
        while True:
            try:
                data = self._channel.recv(MESSAGE)
            except OSError:
                data = b""
            with self._lock:
                if not data:
                    self.lost = True
                    self._answered.notify_all()
                    return
                self._note(cast(ServerMessage, json.loads(data)))

    def _note(self, message: ServerMessage) -> None:
        if "launched" in message:
            launched = cast(Launched, message)
            self._launched[launched["launched"]] = launched["pid"]
            self._answered.notify_all()
        elif "exited" in message:
            exited = cast(Exited, message)
            pid, code = exited["exited"], exited["code"]
            child = self._children.pop(pid, None)
            if child is None:
                self._early[pid] = code
            else:
                child.exited(code)

    def launch(self, env: dict[str, str]) -> ForkedProcess:
        """Fork one driver run with ``env`` (sent as its difference from the server's);
        `OSError` when the server cannot."""
        difference: EnvDifference = {
            "set": {k: v for k, v in env.items() if self.env.get(k) != v},
            "unset": sorted(set(self.env) - set(env))}
        pipes = [os.pipe() for _ in range(3)]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = (os.fdopen(pipes[0][1], "wb"), os.fdopen(pipes[1][0], "rb"),
                os.fdopen(pipes[2][0], "rb"))
        try:
            with self._lock:
                self._tokens += 1
                token = self._tokens
                if self.lost:
                    raise OSError("the fork server is gone")
                request: Launch = {"launch": token, "env": difference}
                message = json.dumps(request).encode()
                if len(message) > MESSAGE:
                    raise OSError("the environment's difference is too long to send")
                socket.send_fds(self._channel, [message], theirs)
                if not self._answered.wait_for(
                        lambda: token in self._launched or self.lost, LAUNCH_TIMEOUT):
                    raise OSError("the fork server did not answer")
                pid = self._launched.pop(token, None)
                if pid is None:
                    raise OSError("the fork server is gone")
                child = self._children[pid] = ForkedProcess(pid, ours, self)
                if pid in self._early:
                    self._children.pop(pid)
                    child.exited(self._early.pop(pid))
            return child
        except OSError:
            for stream in ours:
                stream.close()
            raise
        finally:
            for fd in theirs:
                os.close(fd)

    def close(self) -> None:
        """End the server (its children live on: their pipes are their owners')."""
        try:  # the reader blocked in recv holds the socket: only a shutdown ends it
            self._channel.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._channel.close()
        try:
            self._process.wait(LAUNCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._process.kill()


#: a server per command line; None: that command cannot fork
_SERVERS: dict[tuple[str, ...], ForkServer | None] = {}
_SERVERS_LOCK = threading.Lock()


def _server(argv: Sequence[str], env: dict[str, str]) -> ForkServer | None:
    key = tuple(argv)
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if key not in _SERVERS or (server is not None and server.lost):
            try:
                server = ForkServer(argv, env)
            except OSError:
                server = None
            _SERVERS[key] = server
        return server


def _forkable(argv: Sequence[str], env: dict[str, str]) -> bool:
    """``python -m groupcheck.targets.wire.drivers.<driver>`` on Linux's pidfds, unless
    ``GROUPCHECK_FORK_DRIVERS=0`` asks for every driver to be started."""
    return (len(argv) >= 2 and argv[-2] == "-m" and argv[-1].startswith(DRIVER_PREFIX)
            and env.get(SWITCH, "1") != "0"
            and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds"))


def launch(argv: Sequence[str], env: dict[str, str]) -> ChildProcess:
    """A driver process for ``argv``: forked from its command's warm server where it can
    be, else started (``start_new_session``, as a forked one is)."""
    server = _server(argv, env) if _forkable(argv, env) else None
    if server is not None:
        try:
            return server.launch(env)
        except OSError:
            pass
    return subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)


@atexit.register
def _close_servers() -> None:
    for server in _SERVERS.values():
        if server is not None:
            server.close()
