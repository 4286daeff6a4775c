"""The broker's clock leaves the broker's own stalls out: a pause of its process (a long
garbage collection, a starved CPU) expires no member whose heartbeats arrived meanwhile,
and a member that really falls silent is still expired at its session timeout."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.broker.loop_clock import WATCH_S, LoopClock  # noqa: E402

from helpers.broker_wire import RawClient, told  # noqa: E402

GROUP, TOPIC = "g", "t"
SESSION_MS = 600


def test_a_timer_due_in_a_stall_fires_once_the_clock_without_the_stall_reaches_it() -> None:
    async def stalled_run() -> tuple[int, list[tuple[int, float]], float, float]:
        loop = asyncio.get_running_loop()
        clock = LoopClock(loop)
        fired: list[tuple[int, float]] = []
        await asyncio.sleep(0.1)
        armed = clock.now_ms()
        clock.arm("g", armed + 200, lambda ms: fired.append((clock.now_ms(), loop.time())))
        time.sleep(0.6)  # the loop stalls past the timer's deadline
        woke = loop.time()
        await asyncio.sleep(0.5)
        clock.close()
        return armed, fired, woke, clock.stalled_s

    armed, fired, woke, stalled = asyncio.run(stalled_run())
    assert stalled >= 0.6 - WATCH_S
    [(clock_ms, at)] = fired
    assert clock_ms >= armed + 200
    # the 200 ms the clock still lacked, after the stall (less what the watch, due up to
    # WATCH_S into the stall, counted as running time)
    assert at - woke >= 0.2 - WATCH_S - 0.01


def test_an_unstalled_timer_fires_on_time_and_the_clock_never_goes_back() -> None:
    async def run() -> tuple[list[int], list[int], float]:
        clock = LoopClock(asyncio.get_running_loop())
        fired: list[int] = []
        clock.arm("g", 100, fired.append)
        readings = []
        for _ in range(6):
            readings.append(clock.now_ms())
            await asyncio.sleep(0.03)
        clock.close()
        return fired, readings, clock.stalled_s

    fired, readings, stalled = asyncio.run(run())
    assert fired == [100]
    # five sleeps of 30 ms, less any stall a busy machine imposed (the clock leaves it out)
    assert readings == sorted(readings) and readings[-1] + 1000 * stalled >= 150


def _member(broker: Broker) -> tuple[RawClient, str]:
    """One member alone in generation 1, synced, with a short session timeout."""
    client = RawClient(broker.bootstrap, "a")
    told(client, TOPIC)
    joined = client.join(GROUP, [TOPIC], session_ms=SESSION_MS)
    client.send_sync(GROUP, joined.member_id, 1, {joined.member_id: [(TOPIC, 0), (TOPIC, 1)]})
    assert client.receive().error_code == 0
    return client, joined.member_id


def _members(broker: Broker) -> list[str]:
    description = broker.describe_group(GROUP)
    return [] if description is None else [m.member_id for m in description.members]


@pytest.mark.broker_config(topics={TOPIC: 2}, min_session_timeout_ms=1)
def test_a_stall_of_the_broker_expires_no_member_that_heartbeat_during_it(
        broker: Broker) -> None:
    client, member_id = _member(broker)
    # the broker's loop blocks for over twice the session timeout, as a long GC pause would
    stall = threading.Thread(target=broker._call, args=(lambda _core: time.sleep(1.5),))
    stall.start()
    time.sleep(0.2)
    beat = client.heartbeat(GROUP, member_id, 1)  # sent in the stall, answered after it
    stall.join()
    assert beat.error_code == 0
    assert _members(broker) == [member_id]
    time.sleep(SESSION_MS / 1000 + 0.6)  # now the member is silent past its session
    assert _members(broker) == []
