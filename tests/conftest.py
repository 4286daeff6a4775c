"""The fixtures every test module may ask for (pytest loads this file before the tests):

* `broker` — groupcheck's broker on a free loopback port, fresh for each test; a module sets
  its `BrokerConfig` fields with ``pytestmark = pytest.mark.broker_config(topics={"t": 4})``
  (none: the defaults). Skips without kio, which the broker speaks through;
* `java_frame_reader` — Kafka's own message classes as a reader of frames (one JVM for the
  module), or a skip (a failure under ``GROUPCHECK_REQUIRE_KAFKA``).

The default run deselects the opt-in tests (pyproject.toml's ``-m``); the switches that
once let them run, ``GROUPCHECK_HEAVY`` and the like, still add them, with a notice
(`pytest_configure`). The modules the tests share are in ``helpers/``; the assignors, services
and drivers they check are in ``targets/``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from groupcheck.targets.processes.java_frames import JavaFrameReader

from helpers.kafka_java import frame_reader

if TYPE_CHECKING:
    from groupcheck.broker import Broker

#: the environment variables that once turned opt-in tests on, and the tests they add
OLD_SWITCHES = {"GROUPCHECK_HEAVY": "heavy", "GROUPCHECK_WIRE": "wire",
                "GROUPCHECK_UPGRADES": "upgrades", "GROUPCHECK_DEEP": "deep",
                "GROUPCHECK_AUDIT_CLUSTER": "audit and slow"}


def pytest_configure(config: pytest.Config) -> None:
    """An old switch that is set adds its tests to the selection, with a one-line notice."""
    for variable, selection in OLD_SWITCHES.items():
        if os.environ.get(variable) and config.option.markexpr:
            print(f"{variable} is deprecated: select its tests with -m \"{selection}\"",
                  file=sys.stderr)
            config.option.markexpr = f"({config.option.markexpr}) or ({selection})"


#: the markers of tests that run real clients, JVMs or member drivers
REAL_CLIENTS = ("wire", "upgrades", "versions")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run in parallel (tox: pytest-xdist's ``-n 2 --dist loadgroup``), the tests on real
    clients share one worker, one at a time, with the audit's (one Spark session, not one per
    worker): real clients' timings then meet the load of one other single-threaded test,
    never another group of real clients nor Spark's executors on every core (a Java member
    restarted beside an audit test overran its settle bound)."""
    for item in items:
        if any(item.get_closest_marker(name) for name in (*REAL_CLIENTS, "audit")):
            item.add_marker(pytest.mark.xdist_group("real-clients"))


@pytest.fixture
def broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    pytest.importorskip("kio", reason="groupcheck's broker needs kio")
    # imported here, after the skip: without kio the broker's modules do not import
    from groupcheck.broker import Broker, BrokerConfig

    marker = request.node.get_closest_marker("broker_config")
    with Broker(BrokerConfig(**(marker.kwargs if marker else {}))) as running:
        yield running


@pytest.fixture(scope="module")
def java_frame_reader() -> Iterator[JavaFrameReader]:
    with frame_reader() as reader:
        yield reader
