"""The long codec fuzz run (``tox -e fuzz``): N seeded inputs into every decoder.

Inputs are random bytes and mutated valid encodings (hostile length and count fields, bit
flips, truncation, splicing, trailing bytes, other headers; see ``groupcheck.engines.codec_fuzz``),
fed to `decode_subscription`, `decode_assignment` and the JSON-lines ``decode_*`` ops. Each
must give a value or a `CodecError`, nothing else (I10). The same seed gives the same inputs.

Prints inputs/s and the slowest input with its time: the 20 slowest of the run are timed
again (best of 5), so that a busy machine does not count against an input. Exit 1 on any
other outcome (the input's hex is printed) or when the slowest input takes 10 ms or more.

Usage: ``python bench/fuzz_codec.py --inputs N [--seed S]``
"""

from __future__ import annotations

import argparse
import heapq
import platform
import random
import sys
import time
from collections import Counter

from groupcheck.engines.codec_fuzz import decoder_problems, fuzz_input

SLOWEST_ALLOWED = 0.010
KEEP = 20


def _short_hex(data: bytes, limit: int = 120) -> str:
    text = data.hex()
    return text if len(text) <= limit else f"{text[:limit]}… ({len(data)} bytes)"


def _best_of(data: bytes, times: int = 5) -> float:
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        decoder_problems(data)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="how many inputs")
    parser.add_argument("--seed", type=int, default=0, help="the random seed")
    parser.add_argument("--progress", type=int, default=100_000,
                        help="print a progress line every this many inputs (0: never)")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    slow: list[tuple[float, int, bytes]] = []  # the KEEP slowest in the run, a min-heap
    outcomes: Counter[str] = Counter()
    started = time.perf_counter()
    for i in range(args.inputs):
        data = fuzz_input(rng)
        t0 = time.perf_counter()
        problems = decoder_problems(data, outcomes)
        took = time.perf_counter() - t0
        if problems:
            print(f"FAIL at input {i} (seed {args.seed}): {data.hex()}")
            for problem in problems:
                print(f"  {problem}")
            return 1
        if len(slow) < KEEP:
            heapq.heappush(slow, (took, i, data))
        elif took > slow[0][0]:
            heapq.heapreplace(slow, (took, i, data))
        if args.progress and (i + 1) % args.progress == 0:
            rate = (i + 1) / (time.perf_counter() - started)
            print(f"  {i + 1:,} inputs, {rate:,.0f}/s", flush=True)
    elapsed = time.perf_counter() - started
    # A slow input is slow every time; a busy machine is not: time the slowest again.
    retimed, index, slowest_input, in_run = max(
        ((_best_of(d), i, d, t) for t, i, d in slow), default=(0.0, -1, b"", 0.0))
    worst_in_run = max((t for t, _, _ in slow), default=0.0)
    print(f"codec fuzz: seed {args.seed}, {args.inputs:,} inputs in {elapsed:.1f} s "
          f"({args.inputs / elapsed:,.0f} inputs/s; each through 2 decoders and 2 JSON-lines "
          f"ops) on CPython {platform.python_version()}")
    print("every input gave a value or a CodecError: "
          + ", ".join(f"{label} {n / args.inputs:.1%}" for label, n in sorted(outcomes.items())))
    print(f"slowest: input {index}, {len(slowest_input)} bytes, {retimed * 1e3:.2f} ms "
          f"(best of 5; {in_run * 1e3:.2f} ms in the run): {_short_hex(slowest_input)}")
    print(f"(the {KEEP} slowest in the run, up to {worst_in_run * 1e3:.2f} ms, were timed again)")
    if retimed >= SLOWEST_ALLOWED:
        print(f"FAIL: the slowest input takes {retimed * 1e3:.2f} ms "
              f"(limit {SLOWEST_ALLOWED * 1e3:.0f} ms)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
