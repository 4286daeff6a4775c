"""The battery's engines that hold a target against fixed data: Kafka's own ``assign``
vectors (parity, I1, I2), and the ``codec`` engine — I10 round trips over every writer and
reader version, and I12 over the user data a target writes after ``on_assignment`` for a
fixed set of (owned, generation) inputs, every member's assignment handed over before any
user data is read (so state shared between consumers shows)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Required, TypedDict

from ...properties.assignment import exclusive_ownership, valid_targets
from ...properties.codec import (
    HIGHEST_VERSION,
    Message,
    SubscriptionInput,
    codec_violations,
    expected_subscription_decode,
)
from ...properties.harness import HarnessError
from ...properties.invariants import judged_by
from ...properties.jsonl_shapes import Answered, AssignFn, AssignRequest, Claim, pair_of
from ...properties.user_data_rules import LAYOUTS, user_data_hygiene
from ...targets.adapters.codecs import CodecFailure, ReleaseCodec
from ...targets.target import Target
from ..progress import Meter, ProgressFn, silent
from .parity import ORDER_ONLY, parity_line
from .results import EngineResult, Finding, invariant_id, save_json

__all__ = ["CodecCase", "CodecNote", "answer", "answered", "codec_inputs", "is_codec_record",
           "iter_assign_vectors", "load_assign_vectors", "partition_sets", "replay_codec_record",
           "run_codec", "run_vectors", "subscription_violations", "user_data_inputs", "vectors_dir"]


def vectors_dir(folder: Path | None) -> Path | None:
    """``folder`` when it holds the golden vectors (``assign.jsonl``), else None. The
    command line reads the folder from ``$GROUPCHECK_VECTORS``."""
    return folder if folder is not None and (folder / "assign.jsonl").is_file() else None


class VectorChain(TypedDict):
    id: str
    step: int


class AssignVector(TypedDict, total=False):
    """One golden vector of the assign op: the request, Kafka's answer, how the case was
    made, Kafka's own bug it shows where it shows one, and its chain of rebalances."""

    request: Required[AssignRequest]
    response: Required[Answered]
    case: str
    kafka_bug: str
    chain: VectorChain


def load_assign_vectors(folder: Path | None) -> list[AssignVector]:
    """The golden vectors' ``assign`` lines in ``folder`` ([] when it has none)."""
    return list(iter_assign_vectors(folder))


def iter_assign_vectors(folder: Path | None) -> Iterator[AssignVector]:
    """The same lines, read one at a time."""
    d = vectors_dir(folder)
    if d is None:
        return
    with open(d / "assign.jsonl", encoding="utf-8") as fh:
        yield from (json.loads(line) for line in fh if line.strip())


def answer(assign: AssignFn, request: AssignRequest) -> Answered:
    """The target's answer; an exception as `answered` gives it."""
    try:
        return assign(request)
    except Exception as exc:  # noqa: BLE001 - a failing target is a finding
        return answered(exc)


def answered(outcome: Answered | Exception) -> Answered:
    """An outcome of `Target.assign_many`: an exception as ``{"error"}`` (a timeout marked)."""
    if isinstance(outcome, HarnessError):  # groupcheck's own failure: never a finding
        raise outcome
    if not isinstance(outcome, Exception):
        return outcome
    text = f"{type(outcome).__name__}: {outcome}"
    return {"error": text, "timeout": True} if isinstance(outcome, TimeoutError) else {
        "error": text}


def partition_sets(response: Answered) -> dict[str, frozenset[tuple[str, int]]]:
    if "error" in response:
        return {}
    return {m: frozenset((str(t), int(p)) for t, p in ps)
            for m, ps in (response.get("assignment") or {}).items() if ps}


def run_vectors(target: Target, failures: str, lines: list[AssignVector] | None = None,
                vectors: Path | None = None, *, deadline: float = math.inf,
                progress: ProgressFn = silent) -> EngineResult:
    """The golden vectors' ``assign`` lines of the target's assignor (``lines``, else those
    in the folder ``vectors``): I1 and I2 on every answer, and ``PARITY`` (the same
    partitions per member as Kafka's answer) on lines not marked ``kafka_bug``; the lines
    left at ``deadline`` (``time.perf_counter``) are not run, and the note says how many."""
    result = EngineResult("vectors", judged_by("vectors", timed=target.timeout is not None))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    lines = load_assign_vectors(vectors) if lines is None else lines
    if not lines:
        result.skipped = "golden vectors not found (set GROUPCHECK_VECTORS)"
        return result
    mine = [x for x in lines if x["request"].get("assignor") == target.assignor]
    if not mine:
        result.skipped = f"no vector lines for assignor {target.assignor!r}"
        return result
    started = time.perf_counter()
    meter = Meter(progress, "vectors", target.name, max(deadline - started, 0.0))
    counts = {"PARITY": 0, "I1": 0, "I2": 0, "TIMEOUT": 0}
    order_only = 0  # PARITY lines whose partitions are Kafka's, in another order
    outcomes = target.assign_many(x["request"] for x in mine)
    for line, outcome in zip(mine, outcomes, strict=True):
        if time.perf_counter() >= deadline:
            result.note = (f"{len(mine) - result.runs:,} of {len(mine):,} lines not run: "
                           "the budget ended first")
            break
        meter.tick(result.runs, len(result.findings))
        request, expected = line["request"], line["response"]
        got = answered(outcome)
        result.runs += 1
        problems: list[str] = []
        result.judged["PARITY"] += "kafka_bug" not in line and not got.get("timeout")
        result.judged["TIMEOUT"] += target.timeout is not None  # every request has a limit
        if got.get("timeout"):
            problems.append(f"TIMEOUT: no answer: {got.get('error')}")
        elif "error" not in got:
            result.judged["I1"] += 1
            result.judged["I2"] += 1
            subs = {m: v.get("topics") or [] for m, v in request["members"].items()}
            assignment = {m: [pair_of(c) for c in ps] for m, ps in got["assignment"].items()}
            problems += exclusive_ownership(assignment)
            problems += valid_targets(assignment, subs, request.get("partitions") or {})
        elif "kafka_bug" in line:
            problems.append(f"I2: answered with an error where a correct assignment exists: "
                            f"{got['error']}")
        parity = None if "kafka_bug" in line or got.get("timeout") else parity_line(
            expected, got)
        if parity is not None:
            problems.append(parity[0])
            order_only += parity[1] == ORDER_ONLY
        for p in problems:
            inv = invariant_id(p)
            counts[inv] = counts.get(inv, 0) + 1
            if inv == "PARITY" and parity is not None and parity[1] != ORDER_ONLY \
                    and ORDER_ONLY in getattr(result.findings.get(inv), "violation", ""):
                del result.findings[inv]  # a difference of partitions outranks one of order
            if inv not in result.findings:
                kind = parity[1] if inv == "PARITY" and parity is not None else None
                result.add(_vector_finding(target, failures, line, got, p, kind))
    result.seconds = time.perf_counter() - started
    bugs = sum(1 for x in mine if "kafka_bug" in x)
    cut = f"; {result.note}" if result.note else ""
    result.note = (f"{len(mine)} lines ({bugs} kafka_bug); differing lines: "
                   + ", ".join(f"{k} {v}" for k, v in counts.items())
                   + (f" ({order_only} {ORDER_ONLY})" if order_only else "") + cut)
    return result


def _vector_finding(target: Target, failures: str, line: AssignVector, got: Answered,
                    violation: str, kind: str | None) -> Finding:
    """The line's request saved with what went wrong (``difference``: PARITY's kind)."""
    request, expected, inv = line["request"], line["response"], invariant_id(violation)
    note = {"format": "groupcheck-vector/1", "target": target.name, "case": line.get("case"),
            "kafka_bug": line.get("kafka_bug"), "violation": violation, "kafka": expected,
            "got": got}
    if kind is not None:
        note["difference"] = kind
    path = save_json(failures, f"vector-{target.name}-{inv}", {**request, "groupcheck": note},
                     {"target": target.name, "invariant": inv, "case": line.get("case"),
                      "request": request})
    return Finding(inv, f"{violation} (case {line.get('case')})", path, len(request["members"]),
                   f"case {line.get('case')}\nrequest: {json.dumps(request)}\nkafka:   "
                   f"{json.dumps(expected.get('assignment'))}\ngot:     "
                   f"{json.dumps(got.get('assignment', got))}")


# ---------------------------------------------------------------------------------------
# codec


def codec_inputs() -> list[SubscriptionInput]:
    """Subscriptions that exercise every field: unsorted and repeated topics, unsorted owned
    partitions across topics, empty and absent user data, generations, racks."""
    return [
        {"topics": ["t0"], "userData": None, "owned": [], "generation": -1, "rack": None},
        {"topics": ["b", "a"], "userData": b"\x00\x01", "owned": [("b", 1), ("a", 0), ("b", 0)],
         "generation": 5, "rack": "r1"},
        {"topics": ["t1", "t0", "t2"], "userData": b"", "owned": [("t2", 3), ("t0", 1)],
         "generation": 2, "rack": None},
        {"topics": ["a"], "userData": b"xyz", "owned": [("a", 2), ("a", 0), ("a", 1)],
         "generation": 7, "rack": ""},
        {"topics": [], "userData": None, "owned": [], "generation": 0, "rack": "rack-\u00e9"},
    ]


def user_data_inputs() -> list[tuple[list[tuple[str, int]], int, list[str]]]:
    """(owned, generation, topics) handed to fresh members: nothing, one partition,
    partitions of several topics out of order, generation 0 and the int32 maximum, a
    non-ASCII topic name."""
    many = [(f"t{i % 3}", i // 3) for i in range(21)]
    return [([], 1, ["t0"]), ([("t0", 0)], 1, ["t0"]),
            ([("t1", 2), ("t0", 1), ("t1", 0)], 5, ["t0", "t1"]),
            ([("b", 1), ("a", 0)], 0, ["a", "b"]), (many, 2**31 - 1, ["t0", "t1", "t2"]),
            ([("t\u00e9", 3)], 7, ["t\u00e9"])]


class CodecNote(TypedDict, total=False):
    """What went wrong with a codec input (``groupcheck`` in its file): the bytes written
    (I10, hex) or the user data written (I12, hex), the target and the violations."""

    format: Required[str]
    hex: str | None
    userData: str | None
    target: str
    violations: list[str]


class CodecCase(TypedDict, total=False):
    """A counterexample of the codec engine as it saves it: the JSON-lines op that writes
    the input (``encode_subscription`` for I10 at ``version``, ``user_data`` for I12 with
    its ``assignor``), its fields (user data as hex), and what went wrong."""

    op: Required[str]
    version: int
    assignor: str
    topics: Required[list[str]]
    owned: Required[list[Claim]]
    generation: Required[int]
    rack: str | None
    userData: str | None
    groupcheck: CodecNote


def _keep(result: EngineResult, failures: str, target: Target, invariant: str,
          found: list[str], request: CodecCase, meta: CodecNote, detail: str) -> None:
    """Save the failing request (with what went wrong under ``groupcheck``) and add it."""
    kind = "codec" if invariant == "I10" else "user-data"
    path = save_json(failures, f"{kind}-{target.name}-{invariant}", {
        **request, "groupcheck": {**meta, "target": target.name, "violations": found}},
        {"target": target.name, "invariant": invariant, "request": request})
    result.add(Finding(invariant, found[0], path, None, detail))


def _run_user_data(target: Target, result: EngineResult, failures: str) -> None:
    """I12 over `user_data_inputs` (the layouts of Kafka's sticky assignors)."""
    assert target.user_data is not None and target.assignor is not None
    inputs = user_data_inputs()
    try:
        written = target.user_data(inputs)
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - the writer must not fail
        result.add(Finding("I12", f"I12: writing user data raised {type(exc).__name__}: {exc}"))
        return
    for (owned, generation, topics), data in zip(inputs, written, strict=True):
        result.runs += 1
        result.judged["I12"] += 1
        found = user_data_hygiene(target.assignor, data, owned, generation)
        if found:
            shown = None if data is None else data.hex()
            _keep(result, failures, target, "I12", found, {
                "op": "user_data", "assignor": target.assignor, "topics": topics,
                "owned": [list(tp) for tp in owned], "generation": generation},
                  {"format": "groupcheck-user-data/1", "userData": shown},
                  f"on_assignment({owned}, {generation}) then user data {shown}")
            return


def run_codec(target: Target, failures: str, *, deadline: float = math.inf) -> EngineResult:
    """I10 over the target's subscription codec, I12 over its user data; no input is
    started after ``deadline`` (``time.perf_counter``), and the note says so."""
    reads_user_data = target.user_data is not None and target.assignor in LAYOUTS
    checked = (("I10",) if target.codec is not None else ()) + (
        ("I12",) if reads_user_data else ())
    result = EngineResult("codec", checked)
    if not checked:
        result.skipped = "no codec, no user data of Kafka's sticky assignors"
        return result
    started = time.perf_counter()
    if target.codec is not None:
        _run_subscription_codec(target, result, failures, deadline)
    if reads_user_data and time.perf_counter() < deadline:
        _run_user_data(target, result, failures)
    if time.perf_counter() >= deadline:
        result.note = "stopped at the end of its budget"
    result.seconds = time.perf_counter() - started
    return result


def _held_to(codec: Any) -> tuple[int | None, Callable[[int], bool]]:
    """The highest version the codec's reader knows (None: all) and whether a writer at a
    version is held to a v3 writer's order: a release's codec
    (`targets.adapters.codecs.ReleaseCodec`) says, any other is held to everything."""
    if isinstance(codec, ReleaseCodec):
        return codec.reader_highest, codec.ordered
    return None, lambda _w: True


def subscription_violations(target: Target, original: SubscriptionInput, w: int
                            ) -> tuple[list[str], bytes | None, int]:
    """I10 for one input written at ``w`` and read back under every header: the
    violations, the bytes written, and how many reads were judged. A release's codec
    (`ReleaseCodec`) writes what its member holds at the versions it writes, a newer member
    the others, and is held to what its highest layout reads."""
    codec = target.codec
    highest, ordered = _held_to(codec)
    x = codec.as_sent(original, w) if isinstance(codec, ReleaseCodec) else original
    try:
        data = bytes(codec.encode_subscription(x.copy(), w))
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - the writer must not fail
        return [f"I10: writing a valid subscription at v{w} raised "
                f"{type(exc).__name__}: {exc}"], None, 0
    found: list[str] = []
    reads = 0
    for r in range(HIGHEST_VERSION + 1):
        reads += 1
        reread = r.to_bytes(2, "big", signed=True) + data[2:]
        try:
            decoded: Message | None = codec.decode_subscription(reread)
        except CodecFailure:
            decoded = None
        except HarnessError:  # groupcheck's own failure: never a finding
            raise
        except Exception as exc:  # noqa: BLE001
            found.append(f"I10: reading v{w} bytes as v{r} raised "
                         f"{type(exc).__name__}: {exc} (must decode or fail cleanly)")
            break
        if decoded is not None and decoded.get("remaining") is None:
            # the codec does not say how many bytes it left unread: not judged
            expected = expected_subscription_decode(x, w, r, highest)
            decoded["remaining"] = expected["remaining"] if expected else 0
        found += codec_violations(x, w, r, decoded, reader_highest=highest, ordered=ordered(w))
        if found:
            break
    return found, data, reads


def _run_subscription_codec(target: Target, result: EngineResult, failures: str,
                            deadline: float) -> None:
    """`subscription_violations` for every input and writer version, to the first
    violation or ``deadline``."""
    for x in codec_inputs():
        if time.perf_counter() >= deadline:
            return
        for w in range(HIGHEST_VERSION + 1):
            found, data, reads = subscription_violations(target, x, w)
            result.runs += reads
            result.judged["I10"] += reads
            if found:
                shown = None if data is None else data.hex()
                _keep(result, failures, target, "I10", found, {
                    "op": "encode_subscription", "version": w, "topics": x["topics"],
                    "owned": [list(tp) for tp in x["owned"]], "generation": x["generation"],
                    "rack": x["rack"],
                    "userData": None if x["userData"] is None else x["userData"].hex()},
                      {"format": "groupcheck-codec/1", "hex": shown},
                      f"input: {x!r}\nwritten at v{w}: {shown}")
                return


def is_codec_record(body: Any) -> bool:
    """A counterexample the codec engine saved (I10 or I12): an input, not a request."""
    return isinstance(body, dict) and body.get("op") in ("encode_subscription", "user_data") \
        and isinstance(body.get("groupcheck"), dict)


def replay_codec_record(target: Target, body: CodecCase) -> list[str]:
    """The violations ``target`` shows on a saved codec record (`is_codec_record`): its
    input written at its version and read back (I10), or its user data written after its
    assignment (I12)."""
    owned = [(str(t), int(p)) for t, p in body.get("owned") or []]
    if body["op"] == "encode_subscription":
        if target.codec is None:
            raise ValueError(f"{target.name} has no codec")
        data = body.get("userData")
        x: SubscriptionInput = {"topics": list(body["topics"]), "owned": owned,
                                "generation": body.get("generation", -1),
                                "rack": body.get("rack"),
                                "userData": None if data is None else bytes.fromhex(data)}
        return subscription_violations(target, x, int(body["version"]))[0]
    if target.user_data is None or target.assignor is None:
        raise ValueError(f"{target.name} writes no user data")
    generation = int(body["generation"])
    written = target.user_data([(owned, generation, list(body["topics"]))])[0]
    return user_data_hygiene(target.assignor, written, owned, generation)
