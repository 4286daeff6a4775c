"""Which assignors a target string offers, and which of them it answers.

A target string names one assignor (``builtin:sticky``, ``python:pkg.mod:Attr``,
``mutant:…``) or leaves it open: ``jsonl:<command>`` (and ``java:``) may answer the names
the process declares (the ``assignors`` op) or, when it does not know that request, any of
Kafka's four; ``python:pkg.module`` stands for every assignor the module defines.
`expand` turns a target string into one `Offer` per assignor, narrowed by ``--assignor``:

* A process's names are asked, not assumed: each gets a small request through the resolved
  target's own ``call`` (an ``assign`` of one member on one partition, then a ``user_data``)
  or, for a target without ``call``, its ``assign``. One that answers with an error is
  "not supported", with its error; the others are checked. Whatever the kind of target, the
  question goes through what it resolved to, so any target that answers JSON-lines ops
  (``jsonl:``, ``java:``) fits.
* A module's assignors are objects the user wrote: each is loaded and checked (a malformed
  one is a load error), none is probed.

``--assignor`` is repeatable and takes comma lists; for a module it matches the attribute
or the assignor's ``name``. Naming one the target does not offer, or one it does not
support, is a usage error; so is a target that supports none of its assignors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..impl.jsonl_shapes import CodecRequest
from ..properties.jsonl_shapes import AssignRequest
from .registry import NO_SETTINGS, resolve
from .settings import Settings
from .target import Target, TargetError

__all__ = ["Offer", "close_all", "expand", "parse_assignors", "probe"]

PROBE_USER_DATA: CodecRequest = {"op": "user_data", "topics": ["t0"], "owned": [["t0", 0]],
                                 "generation": 1}


def probe_assign(assignor: str) -> AssignRequest:
    """A small ``assign`` request for ``assignor`` (one member, one partition)."""
    return {"op": "assign", "mode": "client", "partitions": {"t0": 1},
            "members": {"m0": {"topics": ["t0"], "owned": [], "generation": None}},
            "assignor": assignor}


@dataclass
class Offer:
    """One assignor of a target: ``label`` (the assignor's name, or a module attribute),
    the resolved ``target`` (None when not supported) and the ``error`` it answered."""

    label: str
    target: Target | None
    error: str | None = None

    @property
    def supported(self) -> bool:
        return self.target is not None


def parse_assignors(values: Iterable[str] | None) -> list[str]:
    """``--assignor a --assignor b,c`` → ``[a, b, c]`` (empty: every assignor)."""
    out: list[str] = []
    for value in values or ():
        out += [v.strip() for v in value.split(",") if v.strip() and v.strip() not in out]
    return out


def probe(target: Target) -> str | None:
    """None when ``target`` answers a small request for its assignor, else its error."""
    request = probe_assign(target.assignor or "")
    user_data: CodecRequest = {**PROBE_USER_DATA, "assignor": target.assignor or ""}
    try:
        if target.call is not None:
            for body in (request, user_data):
                answer = target.call(body)
                if "error" in answer:
                    return str(answer["error"])
        elif target.assign is not None:
            target.assign(request)
    except Exception as exc:  # noqa: BLE001 - whatever the target does is its answer
        return f"{type(exc).__name__}: {exc}"
    return None


def _single(text: str, target: Target, wanted: Sequence[str]) -> list[Offer]:
    if wanted and target.assignor not in wanted:
        target.close()
        raise TargetError(f"{text} runs {target.assignor} only; --assignor "
                          f"{','.join(wanted)} names none of it")
    return [Offer(target.assignor or "-", target)]


def _named(text: str, base: Target, choices: list[str], wanted: Sequence[str]) -> list[Offer]:
    """The names a process target may answer (declared, or Kafka's): probe each."""
    assert base.pick is not None
    unknown = [w for w in wanted if w not in choices]
    if unknown:
        raise TargetError(f"--assignor {', '.join(unknown)} is not one of "
                          f"{', '.join(choices)} (what {text} may answer)")
    offers = []
    for choice in choices:
        if wanted and choice not in wanted:
            continue
        picked = base.pick(choice)
        error = probe(picked)
        offers.append(Offer(choice, None if error else picked, error))
    return offers


def _module(text: str, base: Target, choices: list[str], wanted: Sequence[str]) -> list[Offer]:
    """A module's assignors, by attribute or by their ``name`` (loading each checks it)."""
    assert base.pick is not None
    by_attr = [c for c in choices if not wanted or c in wanted]
    rest = [w for w in wanted if w not in choices]
    offers = [Offer(c, base.pick(c)) for c in (choices if rest else by_attr)]
    offers = [o for o in offers if not wanted or o.label in wanted
              or (o.target is not None and o.target.assignor in wanted)]
    found = {o.label for o in offers} | {o.target.assignor for o in offers if o.target}
    missing = [w for w in rest if w not in found]
    if missing:
        raise TargetError(f"--assignor {', '.join(missing)} names no assignor of "
                          f"the module {text} ({', '.join(choices)})")
    return offers


def expand(text: str, assignors: Sequence[str] | None = None,
           timeout: float | None = None, *, refused_ok: bool = False,
           settings: Settings = NO_SETTINGS) -> list[Offer]:
    """Every assignor ``text`` offers (narrowed by ``assignors``), probed where the name is
    a question (see the module doc). Raises `TargetError` with one line; ``refused_ok``
    returns an assignor named in ``assignors`` that the target refuses as not supported
    instead (the pytest plugin shows it as a skipped item)."""
    wanted = list(assignors or ())
    base = resolve(text, timeout=timeout, settings=settings)
    if base.choices is None or base.pick is None:
        return _single(text, base, wanted)
    choices = base.choices()
    if base.assignor is None:
        offers = _module(text, base, choices, wanted)
    else:
        offers = _named(text, base, choices, wanted)
    return _checked(text, offers, [] if refused_ok else wanted)


def _checked(text: str, offers: list[Offer], wanted: Sequence[str]) -> list[Offer]:
    refused = [o for o in offers if not o.supported]
    if wanted and refused:
        raise TargetError(f"{text} does not support {refused[0].label}: {refused[0].error}")
    if not any(o.supported for o in offers):
        first = refused[0].error if refused else "nothing to check"
        raise TargetError(f"{text} supports none of {', '.join(o.label for o in offers)} "
                          f"({first})")
    return offers


def close_all(offers: Iterable[Offer]) -> None:
    """Close every resolved target of ``offers``."""
    for offer in offers:
        if offer.target is not None:
            offer.target.close()
