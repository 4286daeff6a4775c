"""A fork server for the Python member drivers: the client imported once, each driver forked.

Rules: this module runs in a client's own interpreter (the driver bundle), so it imports only
the standard library; it never writes to stdout (a forked driver inherits its buffers) and
starts no thread (a fork copies only the thread that forks).

Theory of operation. ``python -m groupcheck.targets.wire.drivers.forkserver MODULE FD`` imports
the driver module ``MODULE``, calls its ``warm()`` (which imports the client library), and
says ``{"ready": pid}`` on ``FD``, a ``SOCK_SEQPACKET`` socket the harness keeps the other end
of. Each message the harness then sends is a launch: three file descriptors (the driver's
stdin, stdout and stderr) and ``{"launch": token, "env": {"set": {...}, "unset": [...]}}``,
the driver's environment as it differs from the server's. The server forks; the child starts a
session of its own (so a kill reaches its process group alone), puts the three descriptors on
0, 1 and 2, takes its environment and runs ``MODULE.main()``, then exits as ``python -m``
would have (its non-daemon threads joined, an uncaught exception printed to its stderr with
code 1). Once the child's session is made the server answers ``{"launched": token, "pid":
pid}``; when a child exits the server reaps it and says ``{"exited": pid, "code": code}`` (a
signal's code is negative, as `subprocess` reports it). The server ends when the harness's
end closes, leaving any child running to the harness, which holds its pipes.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import socket
import sys
from typing import Any, NoReturn, TypedDict, Union, cast

__all__ = ["EnvDifference", "Exited", "Launch", "Launched", "Ready", "ServerMessage", "serve"]

MESSAGE = 65536  # the longest message either side sends
FDS = 3  # stdin, stdout, stderr


class EnvDifference(TypedDict):
    """A driver's environment as it differs from its server's."""

    set: dict[str, str]
    unset: list[str]


class Launch(TypedDict):
    """The harness's one request (with the driver's three descriptors beside it)."""

    launch: int  # the harness's token, echoed in `Launched`
    env: EnvDifference


class Ready(TypedDict):
    ready: int  # the server's pid, once its client is imported


class Launched(TypedDict):
    launched: int  # the launch's token
    pid: int


class Exited(TypedDict):
    exited: int  # the pid of a driver the server reaped
    code: int  # its exit code; a signal's negative, as `subprocess` reports it


#: what the server says
ServerMessage = Union[Ready, Launched, Exited]  # noqa: UP007 - runs on Python 3.9


def _say(channel: socket.socket, message: ServerMessage) -> None:
    channel.send(json.dumps(message).encode())  # the harness gone: BrokenPipeError ends us


def _child(channel: socket.socket, watched: dict[int, int], fds: list[int],
           settled: int, env: EnvDifference, module: Any) -> NoReturn:
    """In the forked child: become the driver, then exit the interpreter (never returns to
    the server's loop). Its session comes first, and closing ``settled`` says it is made."""
    os.setsid()
    os.close(settled)
    channel.close()
    for pidfd in watched:
        os.close(pidfd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    for name in env["unset"]:
        os.environ.pop(name, None)
    os.environ.update(env["set"])
    module.main()
    raise SystemExit(0)


def _launch(channel: socket.socket, watched: dict[int, int], module: Any) -> bool:
    """One launch request; False when the harness's end has closed."""
    data, fds, _flags, _addr = socket.recv_fds(channel, MESSAGE, FDS)
    if not data:
        return False
    request = cast(Launch, json.loads(data))
    sys.stdout.flush()
    wait_end, settled = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(wait_end)
        _child(channel, watched, fds, settled, request["env"], module)
    os.close(settled)
    os.read(wait_end, 1)  # EOF once the child has its session: a killpg now reaches it
    os.close(wait_end)
    for fd in fds:
        os.close(fd)
    watched[os.pidfd_open(pid)] = pid
    _say(channel, {"launched": request["launch"], "pid": pid})
    return True


def _reap(channel: socket.socket, watched: dict[int, int], pidfd: int) -> None:
    pid = watched.pop(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    _say(channel, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def serve(module_name: str, fd: int) -> None:
    """Warm ``module_name``'s client, then launch drivers until the harness's end closes."""
    channel = socket.socket(fileno=fd)
    module = importlib.import_module(module_name)
    warm = getattr(module, "warm", None)
    if warm is not None:
        warm()
    _say(channel, {"ready": os.getpid()})
    watched: dict[int, int] = {}  # pidfd → the child it watches
    while True:
        readable, _, _ = select.select([fd, *watched], [], [])
        for ready in readable:
            if ready != fd:
                _reap(channel, watched, ready)
            elif not _launch(channel, watched, module):
                return


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
