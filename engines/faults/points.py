"""The fault points of a scope: which fault, aimed at which member's request, at which step
of a group's life, under which rebalance protocol.

What lives here: `FaultPoint` (one point), `STEPS`, `PROTOCOLS`, `KINDS` and `APIS` (the
axes), `FaultScope` (a selection along them, `FULL` every point) and `fault_points` (the
scope's points, in a fixed order), `no_fault` (a step and protocol's story with no fault: what
a point's failure is told apart from).

Theory of operation: an error point carries one of the errors the coordinator's fault table
(broker/faults.py) lets the API answer at some version the broker serves; the other kinds
are the connection closed before the answer, the answer delayed past the member's request
timeout and the coordinator moved to another node. Each point is aimed at one member's next
request of one API at one step: the group's first join, the rebalance a second member's
join starts, the one after a member leaves, and the one after a member crashes; an error the
coordinator never sends to that request (`plausible`) is no point. The enumeration is pure:
no I/O, the same list every time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ...broker.faults import FAULTS, refusal
from ...broker.protocol import API_KEYS
from ...broker.steering import api_key_of

__all__ = ["APIS", "FULL", "KINDS", "PROTOCOLS", "STEPS", "FaultPoint", "FaultScope", "Kind",
           "Protocol", "Step", "fault_points", "no_fault", "plausible"]

Step = Literal["first_join", "second_join", "leave", "crash"]
Protocol = Literal["eager", "cooperative"]
Kind = Literal["error", "close", "delay", "move", "none"]

STEPS: tuple[Step, ...] = ("first_join", "second_join", "leave", "crash")
PROTOCOLS: tuple[Protocol, ...] = ("eager", "cooperative")
KINDS: tuple[Kind, ...] = ("error", "close", "delay", "move")
#: the coordinator's APIs, in the order a member first sends them
APIS: tuple[str, ...] = ("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat",
                         "OffsetFetch", "OffsetCommit", "LeaveGroup")


@dataclass(frozen=True)
class FaultPoint:
    """One fault (``kind``; ``error`` for an error point, else empty) on the target
    member's next ``api`` request at ``step``, under ``protocol`` (kind ``none``: no fault,
    `no_fault`)."""

    step: Step
    protocol: Protocol
    api: str
    kind: Kind
    error: str = ""

    @property
    def name(self) -> str:
        """``first_join/eager/SyncGroup/REBALANCE_IN_PROGRESS``; ``.../JoinGroup/delay``."""
        if self.kind == "none":
            return f"{self.step}/{self.protocol}/no fault"
        fault = self.error if self.kind == "error" else self.kind
        return f"{self.step}/{self.protocol}/{self.api}/{fault}"


@dataclass(frozen=True)
class FaultScope:
    """The axes' values a run plays (by default: all of each)."""

    steps: tuple[Step, ...] = STEPS
    protocols: tuple[Protocol, ...] = PROTOCOLS
    apis: tuple[str, ...] = APIS
    kinds: tuple[Kind, ...] = KINDS

    def __post_init__(self) -> None:
        for value, axis, name in ((self.steps, STEPS, "step"), (self.protocols, PROTOCOLS,
                                  "protocol"), (self.apis, APIS, "API"),
                                  (self.kinds, KINDS, "kind")):
            unknown = sorted(set(value) - set(axis))
            if unknown:
                raise ValueError(f"unknown {name} {', '.join(unknown)}; one of "
                                 f"{', '.join(axis)}")


def _errors(api: str) -> list[str]:
    """The API's errors a fail rule may carry at some version the broker serves, in table
    order, each once."""
    key = api_key_of(api)
    out: list[str] = []
    for fault in FAULTS:
        if fault.api == api and fault.error not in out \
                and refusal(key, fault.code, None) is None:
            out.append(fault.error)
    return out


def plausible(step: Step, api: str, error: str) -> bool:
    """Whether Kafka's coordinator could answer the aimed member's request at ``step`` with
    ``error`` as a fault (`broker.faults.implausible`): no step's members are static, so
    never FENCED_INSTANCE_ID; never MEMBER_ID_REQUIRED, the coordinator's own answer to every
    first JoinGroup (KIP-394), which every first join already gets."""
    return error not in ("FENCED_INSTANCE_ID", "MEMBER_ID_REQUIRED")


def _faults(step: Step, api: str, kinds: Iterable[Kind]) -> list[tuple[Kind, str]]:
    out: list[tuple[Kind, str]] = []
    for kind in kinds:
        if kind == "error":
            out += [("error", error) for error in _errors(api) if plausible(step, api, error)]
        else:
            out.append((kind, ""))
    return out


#: every point
FULL = FaultScope()


def no_fault(step: Step, protocol: Protocol) -> FaultPoint:
    """The story of ``step`` under ``protocol`` with no fault (not a point of any scope):
    once it fails, the failures of that step and protocol's points are the story's, not
    their faults' (`faults.own`)."""
    return FaultPoint(step, protocol, "", "none")


def fault_points(scope: FaultScope = FULL) -> list[FaultPoint]:
    """The scope's points: by step, then protocol, then API (`APIS` order), then fault
    (errors in table order, then the other kinds)."""
    apis = [api for api in APIS if api in scope.apis and api in API_KEYS]
    kinds = [kind for kind in KINDS if kind in scope.kinds]
    return [FaultPoint(step, protocol, api, kind, error)
            for step in (s for s in STEPS if s in scope.steps)
            for protocol in (p for p in PROTOCOLS if p in scope.protocols)
            for api in apis
            for kind, error in _faults(step, api, kinds)]
