"""What the wire benchmarks share: the machine line a table opens with, and the clients of a
``--clients`` list that can run here (each one that cannot is a ``skipped`` row)."""

from __future__ import annotations

import os
import platform
from collections.abc import Iterator

from groupcheck.targets.wire.clients import missing


def machine_line() -> str:
    """``x86_64, 2 cores, load average 0.52 0.61 0.70``."""
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def runnable(clients: str, classpath: str, width: int) -> Iterator[str]:
    """The clients of the comma-separated list that can run here; for each other one a row
    ``<client> skipped: <why>`` (the client column ``width`` wide) is printed instead."""
    for client in clients.split(","):
        why = missing(client, classpath)
        if why:
            print(f"{client:<{width}}skipped: {why}")
            continue
        yield client
