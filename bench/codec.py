"""Benchmark: consumer-protocol encode and decode rates.

Small subscriptions and assignments of each version (0..3), and the large case of Kafka's
scale tests: one member's v3 subscription with 500 topics and 500 owned partitions (one
per topic), and the matching 500-topic assignment. Prints ops/s and µs/op (best of
``--repeat`` rounds of at least 0.2 s each). Target: decoding the large subscription takes
at most 1 ms (Java's client takes 1-5 ms); exit 1 when it does not.

Usage: ``python bench/codec.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import timeit
from collections.abc import Callable

from groupcheck.engines.codec_fuzz import large_subscription
from groupcheck.impl.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupcheck.impl.types import Assignment, Subscription

LARGE_DECODE_TARGET_US = 1000.0

SMALL_SUBSCRIPTION = Subscription(
    topics=["orders", "payments", "shipments"], user_data=b"\x00\x00\x00\x05",
    owned_partitions=[("orders", 0), ("orders", 3), ("payments", 1)], generation_id=5,
    rack_id="rack-a")
SMALL_ASSIGNMENT = Assignment([("orders", 0), ("orders", 3), ("payments", 1),
                               ("shipments", 2)], None)


def per_op(fn: Callable[[], object], repeat: int) -> float:
    """Seconds per call: the best of ``repeat`` rounds of at least 0.2 s."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def cases() -> list[tuple[str, Callable[[], object], Callable[[], object], int]]:
    """(name, encode, decode, encoded size) of every benchmarked message."""
    out: list[tuple[str, Callable[[], object], Callable[[], object], int]] = []
    for v in range(4):
        sub = encode_subscription(SMALL_SUBSCRIPTION, v)
        out.append((f"subscription v{v}, 3 topics", lambda v=v: encode_subscription(
            SMALL_SUBSCRIPTION, v), lambda d=sub: decode_subscription(d), len(sub)))
    for v in range(4):
        a = encode_assignment(SMALL_ASSIGNMENT, v)
        out.append((f"assignment v{v}, 4 partitions", lambda v=v: encode_assignment(
            SMALL_ASSIGNMENT, v), lambda d=a: decode_assignment(d), len(a)))
    large = large_subscription()
    data = encode_subscription(large, 3)
    out.append(("subscription v3, 500 topics + 500 owned", lambda: encode_subscription(large, 3),
                lambda: decode_subscription(data), len(data)))
    assignment = Assignment(list(large.owned_partitions), None)
    adata = encode_assignment(assignment, 3)
    out.append(("assignment v3, 500 topics", lambda: encode_assignment(assignment, 3),
                lambda: decode_assignment(adata), len(adata)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best one counts")
    args = parser.parse_args(argv)
    print(f"CPython {platform.python_version()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("| message | bytes | encode ops/s | encode µs/op | decode ops/s | decode µs/op |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    large_decode = 0.0
    for name, encode, decode, size in cases():
        enc, dec = per_op(encode, args.repeat), per_op(decode, args.repeat)
        print(f"| {name} | {size:,} | {1 / enc:,.0f} | {enc * 1e6:,.1f} | {1 / dec:,.0f} "
              f"| {dec * 1e6:,.1f} |", flush=True)
        if name.startswith("subscription v3, 500"):
            large_decode = dec * 1e6
    verdict = "ok" if large_decode <= LARGE_DECODE_TARGET_US else "TOO SLOW"
    print(f"\nlarge subscription decode: {large_decode:,.0f} µs "
          f"(target ≤ {LARGE_DECODE_TARGET_US:,.0f} µs): {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
