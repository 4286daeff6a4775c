"""``jsonl:<command>``: any process that speaks the JSON-lines contract
(``docs/reference/jsonl-contract.md``).

One long-lived subprocess per target, fed one request per line. Every request has a time
limit; a process that does not answer in time is killed (`TargetTimeout`, a
``TimeoutError``: the engines report it as ``TIMEOUT``), one that exits or answers garbage
fails with `TargetFailure` (the engines' ``ERROR``), and either way the next request starts
a fresh process, so a run goes on. A request interrupted from outside (the audit's alarm)
kills the process too, so a late answer never answers the next request. An answer
``{"error": ...}`` raises `TargetAnswerError`. `JsonlProcess` takes a shell command or an
argument list, so other targets (``java:``) run their own process the same way.

As an assignor (for the state machine) `JsonlAssignor` sends the ``user_data`` op for a
member's next subscription and a ``mode: raw`` ``assign`` for the leader: the process sees
exactly the subscriptions our coordinator collected.
"""

from __future__ import annotations

import atexit
import base64
import json
import queue
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import IO, cast

from ...impl.jsonl_shapes import Answer, CodecRequest
from ...impl.types import Assignment, Cluster, RebalanceProtocol, Subscription
from ...properties.group import GroupTarget
from ...properties.jsonl_shapes import AssignAnswer, AssignRequest, JSONObject, RequestMember
from ..adapters.python_assignor import group_factory
from ..settings import DEFAULT_JSONL_TIMEOUT
from ..target import JsonlRequest

__all__ = ["COOPERATIVE", "DEFAULT_TIMEOUT", "JsonlAssignor", "JsonlProcess", "JsonlTarget",
           "TargetAnswerError", "TargetFailure", "TargetTimeout", "call_user_data",
           "shared_process", "user_data_of"]

#: a request's time limit when the caller gives none (``Settings.jsonl_timeout`` is the
#: environment's)
DEFAULT_TIMEOUT = DEFAULT_JSONL_TIMEOUT
COOPERATIVE = frozenset({"cooperative-sticky"})


class TargetFailure(RuntimeError):
    """The process crashed, hung past its time limit, or answered with something that is not
    one JSON object per line."""


class TargetTimeout(TargetFailure, TimeoutError):
    """The process did not answer within its time limit (it was killed); ``request`` is
    the request it did not answer, so that an engine can save it."""

    request: Mapping[str, object] | None = None


class TargetAnswerError(RuntimeError):
    """The process answered ``{"error": ...}``."""


def _pump(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


class JsonlProcess:
    """One JSON-lines process, restarted after a crash or a timeout."""

    def __init__(self, command: str | Sequence[str], timeout: float = DEFAULT_TIMEOUT, *,
                 label: str | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("jsonl target needs a command")
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.label = label or f"jsonl:{self.command}"
        self.timeout = timeout
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail: list[str] = []
        self.failures = 0
        self.starts = 0
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        """The process is up now (started and not exited)."""
        return self.proc is not None and self.proc.poll() is None

    def _start(self) -> subprocess.Popen[str]:
        self.lines = queue.Queue()
        self.stderr_tail = []
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, encoding="utf-8",
                                bufsize=1)
        assert proc.stdout is not None and proc.stderr is not None
        threading.Thread(target=_pump, args=(proc.stdout, self.lines), daemon=True).start()
        tail = self.stderr_tail

        def drain(stream: IO[str]) -> None:
            for line in stream:
                tail.append(line.rstrip())
                del tail[:-20]
        threading.Thread(target=drain, args=(proc.stderr,), daemon=True).start()
        self.proc = proc
        self.starts += 1
        return proc

    def _kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def _fail(self, why: str, kind: type[TargetFailure] = TargetFailure) -> TargetFailure:
        self.failures += 1
        tail = "; ".join(self.stderr_tail[-3:])
        self._kill()
        return kind(f"{self.label}: {why}" + (f" (stderr: {tail})" if tail else ""))

    def request(self, body: Mapping[str, object]) -> JSONObject:
        """Send one request (any JSON object: the contract's ops, or another program's lines
        such as the frame reader's), return its answer as the process wrote it (``{"error"}``
        answers included): the caller, which knows what it asked, reads it."""
        with self._lock:
            try:
                return self._exchange(body)
            except TargetFailure:
                raise
            except BaseException:
                # interrupted from outside (an alarm, ^C): the process may still answer
                # later, so it must not live to answer the next request
                self.failures += 1
                self._kill()
                raise

    def _exchange(self, body: Mapping[str, object]) -> JSONObject:
        proc = self.proc if self.proc is not None and self.proc.poll() is None \
            else self._start()
        assert proc.stdin is not None
        try:  # ASCII: every string, a lone surrogate too, reaches the process intact
            proc.stdin.write(json.dumps(body, ensure_ascii=True) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail(f"process exited (code {proc.poll()}) before the request"
                             ) from None
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            hung = self._fail(f"no answer within {self.timeout:g}s (killed)", TargetTimeout)
            assert isinstance(hung, TargetTimeout)
            hung.request = body
            raise hung from None
        if line is None:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            raise self._fail(f"process exited (code {code}) without answering")
        try:
            answer = json.loads(line)
        except ValueError:
            raise self._fail(f"answer is not JSON: {line[:120]!r}") from None
        if not isinstance(answer, dict):
            raise self._fail(f"answer is not a JSON object: {line[:120]!r}")
        return answer

    def call(self, body: Mapping[str, object]) -> JSONObject:
        answer = self.request(body)
        if "error" in answer:
            raise TargetAnswerError(str(answer["error"]))
        return answer

    def close(self) -> None:
        with self._lock:
            self._kill()


_PROCESSES: dict[tuple[tuple[str, ...], float], JsonlProcess] = {}


def shared_process(command: str | Sequence[str], timeout: float = DEFAULT_TIMEOUT, *,
                   label: str | None = None) -> JsonlProcess:
    """One process per (command, timeout) for the life of this Python process."""
    argv = tuple(shlex.split(command) if isinstance(command, str) else command)
    key = (argv, timeout)
    if key not in _PROCESSES:
        _PROCESSES[key] = JsonlProcess(command, timeout, label=label)
    return _PROCESSES[key]


@atexit.register
def _close_all() -> None:
    for proc in _PROCESSES.values():
        proc.close()


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def user_data_of(answer: JSONObject) -> bytes | None:
    """The user data of a ``user_data`` answer (base64, or null)."""
    data = answer.get("userData")
    if data is not None and not isinstance(data, str):
        raise TypeError(f"userData must be base64 text or null, not {data!r}")
    return None if data is None else base64.b64decode(data)


def call_user_data(call: Callable[[CodecRequest], JSONObject], assignor: str
                   ) -> Callable[[Sequence[tuple[list[tuple[str, int]], int, list[str]]]],
                                 list[bytes | None]]:
    """A user-data writer over the ``user_data`` op of any JSON-lines target (``call``
    raises on an ``{"error"}`` answer)."""
    def write(inputs: Sequence[tuple[list[tuple[str, int]], int, list[str]]]
              ) -> list[bytes | None]:
        out: list[bytes | None] = []
        for owned, generation, topics in inputs:
            answer = call({"op": "user_data", "assignor": assignor, "topics": sorted(topics),
                           "owned": [[t, p] for t, p in owned], "generation": generation})
            out.append(user_data_of(answer))
        return out
    return write


class JsonlAssignor:
    """One consumer's assignor, answered by the process (``user_data`` and raw ``assign``)."""

    def __init__(self, process: JsonlProcess, name: str) -> None:
        self.process = process
        self.name = name
        self.supported_protocols: tuple[RebalanceProtocol, ...] = (
            (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER) if name in COOPERATIVE
            else (RebalanceProtocol.EAGER,))
        self.owned: list[tuple[str, int]] | None = None
        self.generation: int | None = None

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.owned = list(assignment.partitions)
        self.generation = generation

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        answer = self.process.call({
            "op": "user_data", "assignor": self.name, "topics": sorted(topics),
            "owned": [[t, p] for t, p in self.owned or []], "generation": self.generation})
        return user_data_of(answer)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members: dict[str, RequestMember] = {
            m: {"topics": list(s.topics), "userData": _b64(s.user_data),
                "owned": [[t, p] for t, p in s.owned_partitions],
                "generation": s.generation_id, "rack": s.rack_id,
                "groupInstanceId": s.group_instance_id}
            for m, s in subscriptions.items()}
        request: AssignRequest = {"op": "assign", "assignor": self.name, "mode": "raw",
                                  "partitions": dict(cluster.partitions), "members": members}
        # the process answers the assign op; a malformed answer fails in the reading below
        answer = cast(AssignAnswer, self.process.call(request))
        return {m: Assignment([(str(t), int(p)) for t, p in parts])
                for m, parts in answer["assignment"].items()}


class JsonlTarget:
    """A JSON-lines process (``jsonl:<command>``, ``java:``) for one assignor name
    (``assignor``)."""

    def __init__(self, target: str, process: JsonlProcess, assignor: str) -> None:
        self.target = target
        self.process = process
        self.assignor = assignor
        self.cooperative = assignor in COOPERATIVE

    def assign(self, request: AssignRequest) -> AssignAnswer:
        body: AssignRequest = {**request, "op": "assign"}
        # an answer to the assign op: its readers check what they take from it
        return cast(AssignAnswer, self.process.call(body))

    def call(self, request: JsonlRequest) -> Answer:
        """Any op; ``{"error"}`` answers are returned, not raised (vectors compare them)."""
        # the process speaks the contract: its answer is read (and checked) by its caller
        return cast(Answer, self.process.request(request))

    def make(self) -> JsonlAssignor:
        return JsonlAssignor(self.process, self.assignor)

    def group_factory(self) -> Callable[[], GroupTarget]:
        return group_factory(self.target, self.assignor, self.make)

    def close(self) -> None:
        self.process.close()
