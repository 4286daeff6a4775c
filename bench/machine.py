"""Protocol steps per second of the state machine, per builtin target (one core).

A protocol step is one `GroupTarget.step()`: one message delivered, one consumer poll, or
one clock advance; the model judges the group after each. Prints a table; seeded.

    python bench/machine.py [--examples N] [--seed S]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from groupcheck.model.fuzz import fuzz
from groupcheck.model.machine import config_for
from groupcheck.properties.group import GroupTarget
from groupcheck.targets.registry import BUILTIN_ASSIGNORS, group_target_factory


def counting(factory: Callable[[], GroupTarget], counter: list[int]) -> Callable[[], GroupTarget]:
    def make() -> GroupTarget:
        target = factory()
        step = target.step

        def counted() -> bool:
            counter[0] += 1
            return step()

        target.step = counted  # type: ignore[method-assign]
        return target
    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"CPython {platform.python_version()} on {platform.machine()}, one process")
    print(f"{'target':<32} {'examples':>8} {'events':>7} {'steps':>8} {'seconds':>8} "
          f"{'steps/s':>8}")
    for assignor in BUILTIN_ASSIGNORS:
        target = f"builtin:{assignor}"
        counter = [0]
        started = time.perf_counter()
        result = fuzz(counting(group_target_factory(target), counter), config_for(assignor),
                      max_examples=args.examples, seed_value=args.seed)
        seconds = time.perf_counter() - started
        print(f"{target:<32} {result.examples:>8} {result.steps:>7} {counter[0]:>8} "
              f"{seconds:>8.1f} {counter[0] / seconds:>8.0f}")


if __name__ == "__main__":
    main()
