"""What a target's client release does not implement, and how the engines respect it.

A release of Kafka's client is not a broken newest release: it is a client with fewer
features, and the battery holds it only to what it has. The target's profile
(``Target.profile``, learned from the client itself) answers ``absent(feature)`` with
``"absent in <release>"`` or None. From it:

* `absent_invariants`: the invariants whose premise is a missing feature, with the reason
  the tables print (``not judged (absent in 2.8.0: ...)``). Without a generation in its
  subscription or user data (KIP-792) a member's claims cannot be told fresh from stale,
  so the hygiene of contested claims (I6) and the generation in the cooperative user data
  (I12) are not judged.
* `playable`: the scenarios engine, which stops at its first violation, plays no story with
  contested claims or a stalled member that comes back (its old claims collide with the new
  owner's): there I6 would come first and, absent, hide the rest. The prover runs contested
  claims all the same (it judges every configuration of its scope), so what a release does
  with two claims of one partition is still held to I1 and I5.
* `mark_absent`: after an engine ran, what it found of an absent invariant moves to
  ``EngineResult.absent`` — shown, never a failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...targets.target import Target
from .results import EngineResult

__all__ = ["absent_invariants", "mark_absent", "playable"]

def _generation_gap(target: Target) -> str | None:
    profile = target.profile
    return None if profile is None else profile.absent("generation")


def absent_invariants(target: Target) -> dict[str, str]:
    """Invariant → why it is not judged on ``target``'s release (empty: all judged)."""
    gap = _generation_gap(target)
    if gap is None:
        return {}
    why = (f"{gap}: its members send no generation (KIP-792), so a claim cannot be told "
           "fresh from stale")
    out = {"I6": why}
    if target.assignor == "cooperative-sticky":
        out["I12"] = f"{gap}: its cooperative user data carries no generation (KIP-792)"
    return out


def _contested(members: Sequence[Mapping[str, Any]]) -> bool:
    seen: set[tuple[str, int]] = set()
    for m in members:
        for t, p in m.get("owned") or []:
            if (t, p) in seen:
                return True
            seen.add((t, p))
    return False


def playable(target: Target, spec: Mapping[str, Any]) -> bool:
    """False for a story ``target``'s release cannot be judged on: without a generation,
    contested claims or a stalled member's return."""
    if _generation_gap(target) is None:
        return True
    if _contested(spec.get("members") or []):
        return False
    return not any(op.get("op") == "return" for step in spec.get("steps") or ()
                   for op in step)


def mark_absent(result: EngineResult, absent: Mapping[str, str]) -> EngineResult:
    """Move what ``result`` found of an absent invariant out of its findings (see the
    module docstring); a no-op for an engine that does not judge it."""
    for inv, why in absent.items():
        if inv not in result.checked:
            continue
        result.absent[inv] = why
        result.findings.pop(inv, None)
        result.inherited.pop(inv, None)
        result.more = [f for f in result.more if f.invariant != inv]
        result.judged.pop(inv, None)
    return result
