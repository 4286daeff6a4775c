"""The battery's engines that hold a target against fixed golden data: Kafka's own
``assign`` vectors (parity, I1, I2) and the I10 codec round trips."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .battery_results import EngineResult, Finding, invariant_id, save_json
from .targets.registry import Target


def vectors_dir() -> Path | None:
    """``$GROUPCHECK_VECTORS``, else ``../shared/vectors`` beside the checkout or the
    working directory."""
    env = os.environ.get("GROUPCHECK_VECTORS")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent.parent
    candidates += [here.parent / "shared" / "vectors", Path.cwd().parent / "shared" / "vectors"]
    for c in candidates:
        if (c / "assign.jsonl").is_file():
            return c
    return None


def load_assign_vectors() -> list[dict[str, Any]]:
    d = vectors_dir()
    if d is None:
        return []
    with open(d / "assign.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def answer(assign: Callable[[dict[str, Any]], dict[str, Any]],
           request: dict[str, Any]) -> dict[str, Any]:
    """The target's answer, with any exception as ``{"error": ...}`` (and ``"timeout":
    true`` when the target did not answer within its time limit)."""
    try:
        return assign(request)
    except TimeoutError as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "timeout": True}
    except Exception as exc:  # noqa: BLE001 - a failing target is a finding
        return {"error": f"{type(exc).__name__}: {exc}"}


def partition_sets(response: dict[str, Any]) -> dict[str, frozenset[tuple[str, int]]]:
    return {m: frozenset((str(t), int(p)) for t, p in ps)
            for m, ps in (response.get("assignment") or {}).items() if ps}


def run_vectors(target: Target, failures: str,
                lines: list[dict[str, Any]] | None = None) -> EngineResult:
    from .properties.assignment import exclusive_ownership, valid_targets

    result = EngineResult("vectors", ("I1", "I2", "PARITY") + (
        ("TIMEOUT",) if target.timeout is not None else ()))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    lines = load_assign_vectors() if lines is None else lines
    if not lines:
        result.skipped = "golden vectors not found (set GROUPCHECK_VECTORS)"
        return result
    mine = [x for x in lines if x["request"].get("assignor") == target.assignor]
    if not mine:
        result.skipped = f"no vector lines for assignor {target.assignor!r}"
        return result
    started = time.perf_counter()
    counts = {"PARITY": 0, "I1": 0, "I2": 0, "TIMEOUT": 0}
    for line in mine:
        request, expected = line["request"], line["response"]
        got = answer(target.assign, request)
        result.runs += 1
        problems: list[str] = []
        if got.get("timeout"):
            problems.append(f"TIMEOUT: no answer: {got['error']}")
        elif "error" not in got:
            subs = {m: v.get("topics") or [] for m, v in request["members"].items()}
            assignment = {m: [(t, p) for t, p in ps] for m, ps in got["assignment"].items()}
            problems += exclusive_ownership(assignment)
            problems += valid_targets(assignment, subs, request.get("partitions") or {})
        elif "kafka_bug" in line:
            problems.append(f"I2: answered with an error where a correct assignment exists: "
                            f"{got['error']}")
        if "kafka_bug" not in line and not got.get("timeout"):
            if "error" in expected and "error" not in got:
                problems.append(f"PARITY: Kafka raised {expected['errorClass']}, the target "
                                "answered")
            elif "error" not in expected and "error" in got:
                problems.append(f"PARITY: the target raised {got['error']}")
            elif "error" not in expected and partition_sets(got) != partition_sets(expected):
                problems.append(f"PARITY: {_first_member_difference(expected, got)}")
        for p in problems:
            inv = invariant_id(p)
            counts[inv] = counts.get(inv, 0) + 1
            if inv not in result.findings:
                body = {**request, "groupcheck": {
                    "format": "groupcheck-vector/1", "target": target.name,
                    "case": line.get("case"), "kafka_bug": line.get("kafka_bug"),
                    "violation": p, "kafka": expected, "got": got}}
                path = save_json(failures, f"vector-{target.name}-{inv}", body)
                result.add(Finding(inv, f"{p} (case {line.get('case')})", path,
                                   len(request["members"]),
                                   f"case {line.get('case')}\n"
                                   f"request: {json.dumps(request)}\n"
                                   f"kafka:   {json.dumps(expected.get('assignment'))}\n"
                                   f"got:     {json.dumps(got.get('assignment', got))}"))
    result.seconds = time.perf_counter() - started
    bugs = sum(1 for x in mine if "kafka_bug" in x)
    result.note = (f"{len(mine)} lines ({bugs} kafka_bug); differing lines: "
                   + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return result


def _first_member_difference(expected: dict[str, Any], got: dict[str, Any]) -> str:
    a, b = partition_sets(expected), partition_sets(got)
    for m in sorted(set(a) | set(b)):
        if a.get(m, frozenset()) != b.get(m, frozenset()):
            def show(s: frozenset[tuple[str, int]]) -> str:
                return ",".join(f"{t}-{p}" for t, p in sorted(s)) or "-"
            return f"{m}: Kafka {show(a.get(m, frozenset()))}, target {show(b.get(m, frozenset()))}"
    return "no difference"


# ---------------------------------------------------------------------------------------
# codec


def codec_inputs() -> list[dict[str, Any]]:
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


def run_codec(target: Target, failures: str) -> EngineResult:
    from .properties.codec import (
        HIGHEST_VERSION,
        codec_violations,
        expected_subscription_decode,
    )
    from .targets.codecs import CodecFailure

    result = EngineResult("codec", ("I10",))
    codec = target.codec
    if codec is None:
        result.skipped = "no codec"
        return result
    started = time.perf_counter()
    for x in codec_inputs():
        for w in range(HIGHEST_VERSION + 1):
            found: list[str] = []
            try:
                data = codec.encode_subscription(dict(x), w)
            except Exception as exc:  # noqa: BLE001 - the writer must not fail
                found.append(f"I10: writing a valid subscription at v{w} raised "
                             f"{type(exc).__name__}: {exc}")
                data = None
            for r in range(HIGHEST_VERSION + 1):
                if data is None or found:
                    break
                result.runs += 1
                reread = r.to_bytes(2, "big", signed=True) + data[2:]
                try:
                    decoded: dict[str, Any] | None = codec.decode_subscription(reread)
                except CodecFailure:
                    decoded = None
                except Exception as exc:  # noqa: BLE001
                    found.append(f"I10: reading v{w} bytes as v{r} raised "
                                 f"{type(exc).__name__}: {exc} (must decode or fail cleanly)")
                    break
                if decoded is not None and decoded.get("remaining") is None:
                    # the codec does not say how many bytes it left unread: not judged
                    expected = expected_subscription_decode(x, w, r)
                    decoded["remaining"] = expected["remaining"] if expected else 0
                found += codec_violations(x, w, r, decoded)
            if found:
                body = {"op": "encode_subscription", "version": w, "topics": x["topics"],
                        "owned": [list(tp) for tp in x["owned"]], "generation": x["generation"],
                        "rack": x["rack"],
                        "userData": None if x["userData"] is None else x["userData"].hex(),
                        "groupcheck": {"format": "groupcheck-codec/1", "target": target.name,
                                       "violations": found,
                                       "hex": None if data is None else data.hex()}}
                path = save_json(failures, f"codec-{target.name}-I10", body)
                result.add(Finding("I10", found[0], path, None,
                                   f"input: {x!r}\nwritten at v{w}: "
                                   f"{None if data is None else data.hex()}"))
                result.seconds = time.perf_counter() - started
                return result
    result.seconds = time.perf_counter() - started
    return result
