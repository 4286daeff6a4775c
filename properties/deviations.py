"""Where groupcheck answers otherwise than Kafka on purpose (D1–D4, docs/explanation/model.md),
and whether a difference between the two answers to one request is one of them.

Theory of operation. ``impl/`` copies Kafka's Java client decision for decision, so on any
request the two must give the same answer, list for list: the same members in the same
order, the same partitions in the same order, the same user data, generation and protocol,
or the same exception. The only exceptions are the deviations D1–D4, each of which fixes
an answer of Kafka's that is not one a group can live with. `explain` reads a difference
and says which deviation it is, or why none is:

1. Kafka's answer must be of a kind a deviation is about (`kafka_breach`): it breaks I1
   (a partition given twice) or I2 (a partition outside the metadata, to a member not
   subscribed to its topic, or, for an EAGER answer, left to nobody), it is an exception
   on a request a correct client sent (every client-mode request is one), or it never
   came (``TIMEOUT``).
2. groupcheck's answer must keep I1 and I2 (an answer, not an exception).
3. The request must have the premise of a deviation whose Kafka behaviour is that kind
   (`premises`): D1 a claim on a partition number the metadata lacks; D2 a sticky-family
   member with an empty subscription; D3 a sticky-family group on the general path where a
   member claims a partition of a topic it no longer subscribes to; D4 a sticky-family
   group on the general path where groupcheck's own loop guard fired on this very request
   (the caller says so: ``loop_guard``), the evidence that Kafka's reassignment loop
   cannot end.

Anything else is unexplained: a fidelity bug in ``impl/`` or a deviation not yet written
down. Everything here works on plain JSON data (requests and answers of the ``assign`` op);
an answer that is an exception is ``{"error": "<KafkaClass>: <message>"}``, one that never
came ``{"error": ..., "timeout": true}``, and a process that broke ``{"error": ...,
"failure": true}`` (`ask` makes these from an assign function).

Labels from evidence use the same comparison the other way round: `agreement` counts how
many requests of a chain a reference (Kafka's client) answers exactly as the target did, so
a violation found within them is the reference's own (`evidence_labels`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import assignment as A
from .jsonl_shapes import Answered, AssignFn, AssignRequest

__all__ = ["COMPARED", "DEVIATIONS", "EVIDENCE", "KINDS", "Explanation", "agreement", "ask",
           "evidence_labels", "explain", "kafka_breach", "premises", "same_answer", "same_shared"]

_STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})
#: the label of a violation a reference reproduced (`agreement`); rules have ids K1, K2, …
EVIDENCE = "ref"
#: the parts of an ``assign`` answer that must be equal (``ms`` is a timing)
COMPARED = ("assignment", "userData", "assignmentUserData", "generation", "protocol")

DEVIATIONS: dict[str, str] = {
    "D1": "claims on partition numbers the leader's metadata lacks are ignored (Kafka "
          "assigns such a partition twice, hands out one outside the metadata, or throws "
          "IllegalStateException)",
    "D2": "a partition the constrained builder hands to a member with an empty "
          "subscription goes to a subscriber instead",
    "D3": "on the general path, a previous owner that no longer subscribes to the topic "
          "cannot take the partition back (Kafka throws NullPointerException or hands it "
          "to the non-subscriber)",
    "D4": "on the general path, a reassignment pass that would start from an assignment "
          "already seen drops the swap rule (Kafka's loop never returns)",
}
#: the kinds of Kafka answer (`kafka_breach`) each deviation is about
KINDS: dict[str, frozenset[str]] = {
    "D1": frozenset({"I1", "I2", "ERROR"}),
    "D2": frozenset({"I2"}),
    "D3": frozenset({"I2", "ERROR"}),
    "D4": frozenset({"TIMEOUT"}),
}


@dataclass(frozen=True)
class Explanation:
    """What one difference is: ``deviations`` it falls under (empty: unexplained, then
    ``why`` says what is missing); ``kind``: what Kafka's answer did (`kafka_breach`), or
    ``""`` when Kafka's answer keeps I1 and I2."""

    deviations: tuple[str, ...]
    kind: str
    why: str

    @property
    def explained(self) -> bool:
        return bool(self.deviations)

    @property
    def label(self) -> str:
        """``"D1 (I1)"`` or ``"unexplained"``, for tables."""
        if not self.deviations:
            return "unexplained"
        return f"{'+'.join(self.deviations)} ({self.kind})"


def same_answer(a: Mapping[str, Any], b: Mapping[str, Any],
                fields: Sequence[str] = COMPARED) -> bool:
    """Equal list for list: member order, partition order, user data, generation and
    protocol (``fields``); or the same exception (class and message)."""
    if "error" in a or "error" in b:
        return a.get("error") == b.get("error") and bool(a.get("timeout")) == bool(
            b.get("timeout"))
    if list(a.get("assignment") or {}) != list(b.get("assignment") or {}):
        return False
    return json.dumps([a.get(k) for k in fields]) == json.dumps([b.get(k) for k in fields])


def same_shared(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """`same_answer` on the fields both answers carry (the audit's builtin target leaves out
    the members' next user data, which the chains never read); the assignment always."""
    shared = [k for k in COMPARED if k == "assignment" or (k in a and k in b)]
    return same_answer(a, b, shared)


def _subscriptions(request: Mapping[str, Any]) -> dict[str, list[str]]:
    return {str(m): list(v.get("topics") or []) for m, v in request["members"].items()}


def _breaches(request: Mapping[str, Any], answer: Mapping[str, Any]) -> list[str]:
    """I1 and I2 over one answer: exclusive, valid and, for an EAGER answer (settled at
    once), complete."""
    assignment = {str(m): [(str(tp[0]), int(tp[1])) for tp in ps]
                  for m, ps in (answer.get("assignment") or {}).items()}
    subs = _subscriptions(request)
    partitions: dict[str, int] = dict(request.get("partitions") or {})
    found = A.exclusive_ownership(assignment) + A.valid_targets(assignment, subs, partitions)
    if answer.get("protocol") != "COOPERATIVE":
        found += [v for v in A.complete(assignment, subs, partitions) if v not in found]
    return found


def kafka_breach(request: Mapping[str, Any], answer: Mapping[str, Any]) -> str:
    """``TIMEOUT``, ``ERROR``, ``I1`` or ``I2``: what is wrong with Kafka's answer;
    ``""`` when it keeps I1 and I2; ``FAILURE`` when the process that runs Kafka's client
    broke (no deviation is about that)."""
    if answer.get("timeout"):
        return "TIMEOUT"
    if answer.get("failure"):
        return "FAILURE"
    if "error" in answer:
        return "ERROR"
    found = _breaches(request, answer)
    if any(v.startswith("I1") for v in found):
        return "I1"
    return "I2" if found else ""


def _general_path(request: Mapping[str, Any]) -> bool:
    """Kafka's sticky assignors leave the constrained path when members subscribe to
    different topic sets."""
    return len({frozenset(ts) for ts in _subscriptions(request).values()}) > 1


def _claims(request: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """(member, topic, partition) of every claim a member with a generation makes."""
    return [(str(m), str(t), int(p)) for m, v in request["members"].items()
            if v.get("generation") is not None for t, p in v.get("owned") or []]


def premises(request: Mapping[str, Any], loop_guard: bool = False) -> list[str]:
    """The deviations whose situation the request is in (see the module docstring)."""
    sticky = request.get("assignor") in _STICKY_FAMILY
    partitions: dict[str, int] = dict(request.get("partitions") or {})
    subs = {m: set(ts) for m, ts in _subscriptions(request).items()}
    claims = _claims(request)
    out = []
    if any(t in partitions and not 0 <= p < partitions[t] for _, t, p in claims):
        out.append("D1")
    if sticky and any(not ts for ts in subs.values()):
        out.append("D2")
    general = sticky and _general_path(request)
    if general and any(t not in subs[m] for m, t, _ in claims):
        out.append("D3")
    if general and loop_guard:
        out.append("D4")
    return out


def explain(request: Mapping[str, Any], ours: Mapping[str, Any], kafka: Mapping[str, Any],
            loop_guard: bool = False) -> Explanation:
    """Which deviation a difference between ``ours`` and ``kafka`` on ``request`` is (see
    the module docstring); call it only where `same_answer` is false."""
    kind = kafka_breach(request, kafka)
    if not kind:
        return Explanation((), "", "Kafka's answer keeps I1 and I2, so groupcheck's must "
                                   "equal it")
    if "error" in ours:
        return Explanation((), kind, f"groupcheck's answer is an exception too: "
                                     f"{ours['error']}")
    own = _breaches(request, ours)
    if own:
        return Explanation((), kind, f"groupcheck's answer breaks {own[0]}")
    fitting = tuple(d for d in premises(request, loop_guard) if kind in KINDS[d])
    if not fitting:
        return Explanation((), kind, f"Kafka's answer is {kind}, but the request is in the "
                                     "situation of no deviation about that")
    return Explanation(fitting, kind, "")


def ask(assign: AssignFn, request: AssignRequest) -> Answered:
    """``assign(request)`` in the form `same_answer` compares: an exception as ``{"error":
    "<Kafka's class>: <message>"}`` (ours carry ``kafka_class``; a JSON-lines process's own
    error answer arrives as ``TargetAnswerError``), no answer in time as ``timeout``, any
    other exception (a process that broke) as ``failure``."""
    try:
        return assign(request)
    except TimeoutError:
        return {"error": "TIMEOUT", "timeout": True}
    except Exception as exc:  # noqa: BLE001 - an exception is an answer to compare
        kafka_class = getattr(exc, "kafka_class", None)
        if kafka_class:
            return {"error": f"{kafka_class}: {exc}"}
        if type(exc).__name__ == "TargetAnswerError":
            return {"error": str(exc)}
        return {"error": f"{type(exc).__name__}: {exc}", "failure": True}


def agreement(requests: Sequence[AssignRequest], ours: AssignFn,
              reference: AssignFn) -> tuple[int, bool]:
    """Labels from evidence: (how many leading requests ``reference`` answers exactly as
    ``ours`` does (`same_answer` on every field both answers carry), whether what came
    next is no evidence either way).
    A violation found at request ``k`` is the reference's own when ``k`` is below the
    count. What came next is no evidence when the reference broke (it was not asked) or
    answered otherwise as a deviation D1–D4 explains (`explain`: groupcheck differs there
    on purpose, so Kafka's answer cannot speak for it); the rules then stand."""
    for index, request in enumerate(requests):
        mine, theirs = ask(ours, request), ask(reference, request)
        if theirs.get("failure"):
            return index, True
        if not same_shared(mine, theirs):
            return index, explain(request, mine, theirs).explained
    return len(requests), False


def evidence_labels(found_at: Mapping[str, int], labels: dict[str, str],
                    agreed: int, broke: bool) -> None:
    """Relabel ``labels`` (invariant → rule id) in place from an `agreement`: an invariant
    first violated at a request the reference answered identically gets `EVIDENCE`; one at
    or after a request it answered otherwise loses any rule; where what came next is no
    evidence (``broke``) the rules stand."""
    for inv, at in found_at.items():
        if at < agreed:
            labels[inv] = EVIDENCE
        elif not broke:
            labels.pop(inv, None)
