"""Bounded model checking times: proofs and refutations per scope and depth (one core).

Each row is one `bmc_check.check` run; a refutation's time includes replaying its trace on
the builtin group (``confirmed``). The last row is the whole compatibility matrix at the
default scope. Prints a table with the machine and its load.

    python bench/bmc.py [--depths 6,8,10] [--scopes members=3,topics=1,partitions=3;...]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from groupcheck.engines.bmc import TARGET_OF, replayer
from groupcheck.model.bmc import BmcScope
from groupcheck.model.bmc_check import check
from groupcheck.model.compat import CELLS, compatibility_matrix

ROOT = Path(__file__).resolve().parent.parent

CASES = (0, 1, 3, 6)  # v1 sticky, any v0, cooperative v2+, cooperative without generation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depths", default="6,8,10")
    parser.add_argument("--scopes", default="members=2,topics=1,partitions=2;"
                        "members=3,topics=1,partitions=3;members=4,topics=1,partitions=4")
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}")
    print(f"{'scope':<34} {'depth':>5}  {'cell':<62} {'verdict':<28} {'seconds':>8}")
    for scope_text in args.scopes.split(";"):
        scope = BmcScope.parse(scope_text)
        for depth in (int(d) for d in args.depths.split(",")):
            for index in CASES:
                cell = CELLS[index]
                started = time.perf_counter()
                result = check(scope, cell.protocol, cell.mix, depth,
                               replayer(TARGET_OF[cell.protocol]))
                seconds = time.perf_counter() - started
                print(f"{scope.text():<34} {depth:>5}  {cell.label[:62]:<62} "
                      f"{result.verdict()[:28]:<28} {seconds:>8.2f}", flush=True)
    scope = BmcScope()
    started = time.perf_counter()
    compatibility_matrix(scope, 6, lambda p: replayer(TARGET_OF[p]))
    print(f"full matrix, {scope.text()}, depth 6: {time.perf_counter() - started:.2f} s, "
          f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
