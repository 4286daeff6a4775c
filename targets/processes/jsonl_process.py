"""``jsonl:<command>``: any process that speaks the JSON-lines contract
(``docs/reference/jsonl-contract.md``).

One long-lived subprocess per target. Requests are pipelined: up to `WINDOW` are in flight,
each written with an ``"id"`` (`process_window`), written by one thread and read by another
(`process_io`); answers are matched by the id they echo, or by order, and handed back in
request order. Every request has a time limit, counted from the process's last answer (or
from the request, when nothing was in flight): a process that does not answer in time is
killed (`TargetTimeout`, a ``TimeoutError``, naming the oldest request it did not answer:
the engines report it as ``TIMEOUT``); one that exits or answers garbage fails that request
with `TargetFailure` (the engines' ``ERROR``); either way the requests after it go to a fresh
process, so a run goes on. Leaving a stream, or an interruption from outside (the audit's
alarm), with requests in flight kills the process too, so a late answer never answers
another request. An answer ``{"error": ...}`` is that request's alone (`call` raises
`TargetAnswerError`). `JsonlProcess.declared_assignors` asks the process, once, which
assignors it serves (the optional ``assignors`` op). `JsonlProcess` takes a shell command or
an argument list, so other targets (``java:``) run their own process the same way.

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
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import cast

from ...impl.jsonl_shapes import Answer, CodecRequest
from ...impl.types import Assignment, Cluster, RebalanceProtocol, Subscription
from ...properties.group import GroupTarget
from ...properties.jsonl_shapes import AssignAnswer, AssignRequest, JSONObject, RequestMember
from ..adapters.python_assignor import group_factory
from ..settings import DEFAULT_JSONL_TIMEOUT
from ..target import JsonlRequest
from .process_io import EOF, ProcessIO, TargetAnswerError, TargetFailure, TargetTimeout
from .process_window import Outcome, Pending, Window

__all__ = ["COOPERATIVE", "DEFAULT_TIMEOUT", "WINDOW", "JsonlAssignor", "JsonlProcess",
           "JsonlTarget", "Outcome", "TargetAnswerError", "TargetFailure", "TargetTimeout",
           "call_user_data", "declared_names", "shared_process", "user_data_of"]

#: a request's time limit when the caller gives none (``Settings.jsonl_timeout`` is the
#: environment's)
DEFAULT_TIMEOUT = DEFAULT_JSONL_TIMEOUT
COOPERATIVE = frozenset({"cooperative-sticky"})


#: requests in flight to one process at most (``ping`` through ``groupcheck jsonl``: about
#: 3,400 a second with one in flight, 13,300 with 8, 22,000 with 128; BENCHMARKS.md)
WINDOW = 128


class JsonlProcess:
    """One JSON-lines process, restarted after a crash or a timeout. `stream` keeps up to
    ``window`` requests in flight; `request` and `call` send one."""

    def __init__(self, command: str | Sequence[str], timeout: float = DEFAULT_TIMEOUT, *,
                 label: str | None = None, window: int = WINDOW) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("jsonl target needs a command")
        self.command = command if isinstance(command, str) else shlex.join(self.argv)
        self.label = label or f"jsonl:{self.command}"
        self.timeout = timeout
        self.window = window
        self.io: ProcessIO | None = None
        self.failures = 0
        self.starts = 0
        self._lock = threading.Lock()
        self._streaming: int | None = None  # the thread whose stream holds the process
        self._declared: tuple[list[str] | None] | None = None  # the assignors op's, once asked

    @property
    def running(self) -> bool:
        """The process is up now (started and not exited)."""
        return self.io is not None and self.io.proc.poll() is None

    def _live(self) -> ProcessIO:
        io = self.io
        if io is None or io.proc.poll() is not None:
            if io is not None:
                io.kill()
            io = self.io = ProcessIO(self.argv)
            self.starts += 1
        return io

    def _kill(self) -> None:
        io, self.io = self.io, None
        if io is not None:
            io.kill()

    def _fail(self, why: str, kind: type[TargetFailure] = TargetFailure) -> TargetFailure:
        self.failures += 1
        tail = "; ".join(self.io.stderr_tail[-3:]) if self.io is not None else ""
        self._kill()
        return kind(f"{self.label}: {why}" + (f" (stderr: {tail})" if tail else ""))

    def stream(self, bodies: Iterable[Mapping[str, object]]) -> Iterator[Outcome]:
        """Send every request of ``bodies`` (taken as the window has room), yield each one's
        outcome in request order: its answer as the process wrote it (``{"error"}``
        answers included: the caller, which knows what it asked, reads it), or the
        `TargetFailure` that ended it (a `TargetTimeout` names its request). A request the
        process did not answer in time, or crashed on, or answered with garbage, fails;
        the requests after it are sent again to a fresh process. Leaving the stream, or
        an interruption, with requests in flight kills the process, so a late answer never
        answers another request."""
        me = threading.get_ident()
        if self._streaming == me:
            raise RuntimeError(f"{self.label}: a request sent while this thread's stream "
                               "is open would be answered out of turn")
        with self._lock:
            self._streaming = me
            window = Window(self.window)
            try:
                yield from self._pump(iter(bodies), window)
            except BaseException:
                if window.in_flight():
                    if not isinstance(sys.exc_info()[1], GeneratorExit):
                        self.failures += 1
                    self._kill()
                raise
            finally:
                self._streaming = None

    def _pump(self, bodies: Iterator[Mapping[str, object]], window: Window
              ) -> Iterator[Outcome]:
        more = True
        since = time.perf_counter()  # the process's last sign of life
        while True:
            if more and window.low():
                while more and window.has_room():
                    body = next(bodies, None)
                    more = body is not None
                    if body is not None:
                        window.add(body)
            unsent = window.unsent()
            if unsent:
                idle = not window.in_flight()
                io = self._live() if idle or self.io is None else self.io
                since = time.perf_counter() if idle else since
                io.write(b"".join(window.line(pending) for pending in unsent))
            yield from window.ready()
            if not window.in_flight():
                if more or len(window):
                    continue
                return
            since = self._next_answer(window, since)

    def _next_answer(self, window: Window, since: float) -> float:
        """Wait for the next line, give it to its request (or fail the oldest request in
        flight, its clock running from ``since``); returns the new last sign of life."""
        io, head = self.io, window.oldest()
        assert io is not None and head is not None
        try:
            line = io.next_line(since + self.timeout - time.perf_counter())
        except queue.Empty:
            hung = self._fail(f"no answer within {self.timeout:g}s (killed)", TargetTimeout)
            assert isinstance(hung, TargetTimeout)
            hung.request = head.body
            return self._blame(window, head, hung)
        if line == EOF:
            why = f"process exited (code {io.exit_code()}) without answering"
            return self._blame(window, head, self._fail(why))
        try:
            answer = json.loads(line) if line.endswith(b"\n") else None
        except ValueError:
            return self._blame(window, head, self._fail(f"answer is not JSON: {line[:120]!r}"))
        if not isinstance(answer, dict):
            why = "answer is not a JSON object" if line.endswith(b"\n") else "answer cut short"
            return self._blame(window, head, self._fail(f"{why}: {line[:120]!r}"))
        try:
            window.answer(answer)
        except TargetFailure as exc:
            return self._blame(window, head, self._fail(str(exc)))
        return time.perf_counter()

    @staticmethod
    def _blame(window: Window, head: Pending, failure: TargetFailure) -> float:
        window.settle(head, failure)
        window.restarted()
        return time.perf_counter()

    def request(self, body: Mapping[str, object]) -> JSONObject:
        """Send one request (any JSON object: the contract's ops, or another program's lines
        such as the frame reader's), return its answer (`stream`); raises its failure."""
        for outcome in self.stream((body,)):
            if isinstance(outcome, TargetFailure):
                raise outcome
            return outcome
        raise AssertionError("a stream of one request yields one outcome")

    def call(self, body: Mapping[str, object]) -> JSONObject:
        answer = self.request(body)
        if "error" in answer:
            raise TargetAnswerError(str(answer["error"]))
        return answer

    def declared_assignors(self) -> list[str] | None:
        """The assignor names the process declares (the ``assignors`` op), asked once; None
        for a process that does not know the request (an error answer, an answer without
        ``assignors``, or no answer). Raises `ValueError` when the list is malformed."""
        if self._declared is None:
            try:
                answer = self.request({"op": "assignors"})
            except TargetFailure:
                answer = {}
            self._declared = (declared_names(answer),)
        return self._declared[0]

    def close(self) -> None:
        with self._lock:
            self._kill()


def declared_names(answer: JSONObject) -> list[str] | None:
    """The names of an ``assignors`` answer (None when it has none: an error answer, or a
    process that does not know the op); `ValueError` unless they are at least one name,
    distinct, each a non-empty string without a comma or surrounding blanks (what
    ``--assignor`` can name)."""
    if "error" in answer or "assignors" not in answer:
        return None
    names = answer["assignors"]
    listed = names if isinstance(names, list) else []
    good = [n for n in listed if isinstance(n, str) and n == n.strip() != "" and "," not in n]
    if not good or len(good) != len(listed) or len(set(good)) != len(good):
        raise ValueError("'assignors' must be a non-empty list of distinct assignor names, "
                         f"not {json.dumps(names)[:120]}")
    return good


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

    def assign_many(self, requests: Iterable[AssignRequest]
                    ) -> Iterator[AssignAnswer | Exception]:
        """`assign` for many requests in flight (`JsonlProcess.stream`): each answer, or
        what `assign` would raise (`TargetAnswerError`, `TargetFailure`), in request order."""
        bodies = (r if r.get("op") == "assign" else {**r, "op": "assign"} for r in requests)
        for outcome in self.process.stream(bodies):
            if isinstance(outcome, TargetFailure):
                yield outcome
            elif "error" in outcome:
                yield TargetAnswerError(str(outcome["error"]))
            else:  # an answer to the assign op: its readers check what they take from it
                yield cast(AssignAnswer, outcome)

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
