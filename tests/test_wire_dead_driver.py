"""A member driver that dies behind the harness's back never hangs a wire run, in the default
run (seconds, no client library): a driver (tests/targets/quiet_driver.py) is SIGKILLed while the
harness waits for the group to move, or for the driver's ack, and the wait ends at once with
the contract's harness error naming the driver. Also here: a pool of shared drivers (many
members, many groups, one process per client) keeps each group's members apart; the
many-clients engine's plans are seeded and kill only members whose crash is a SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time

import pytest

from groupcheck.engines.many_clients import GroupPlan, plan
from groupcheck.model.event_types import Crash, Join
from groupcheck.model.group_events import Settle
from groupcheck.properties.group import MemberSpec
from groupcheck.targets.wire.clients import ClientInfo
from groupcheck.targets.wire.driver_pool import DriverPool, SharedCrash
from groupcheck.targets.wire.driver_process import MAX_LINE, DriverError, DriverProcess
from groupcheck.targets.wire.wire_group import STEP_WAIT, WireGroup

from helpers import TARGETS

QUIET = TARGETS / "quiet_driver.py"
#: how soon a dead driver must be noticed: a few of the group's ticks, far inside STEP_WAIT
#: (and the command timeout), with room for a loaded machine
NOTICED_WITHIN = 5.0
KILL_AFTER = 0.3


def quiet(*flags: str) -> str:
    return f"cmd={sys.executable} {QUIET} {' '.join(flags)}".strip()


def group_of(client: str, **options: object) -> WireGroup:
    pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
    return WireGroup(f"wire:{client}:range", (client,), "range", **options)  # type: ignore[arg-type]


def spec() -> MemberSpec:
    return MemberSpec(topics=("t0",), assignors=("range",))


def kill_later(driver: DriverProcess) -> threading.Timer:
    timer = threading.Timer(KILL_AFTER, os.killpg, (driver.proc.pid, signal.SIGKILL))
    timer.start()
    return timer


def test_a_driver_killed_while_the_group_waits_ends_the_step_at_once() -> None:
    group = group_of(quiet())
    try:
        group.set_partitions("t0", 2)
        group.join("c1", spec())
        timer = kill_later(group.members["c1"].driver)
        began = time.monotonic()
        with pytest.raises(DriverError, match=r"died under c1 \(exited"):
            while group.step():  # the consumer never joins: the group waits for it
                pass
        timer.join()
        assert time.monotonic() - began < min(NOTICED_WITHIN, STEP_WAIT)
    finally:
        group.close()


def test_a_driver_killed_while_the_harness_waits_for_its_ack_is_noticed_at_once() -> None:
    group = group_of(quiet("--die-on-create"))  # SIGKILLs itself instead of answering
    try:
        began = time.monotonic()
        with pytest.raises(DriverError, match="exited"):
            group.join("c1", spec())
        assert time.monotonic() - began < NOTICED_WITHIN
    finally:
        group.close()


def test_a_driver_that_closes_its_stdout_but_lives_on_is_broken_at_once() -> None:
    """EOF on the driver's stdout is the end of it, whether or not the process exits."""
    mute = "import os, time\nos.close(1)\ntime.sleep(60)\n"
    driver = DriverProcess([sys.executable, "-c", mute], "mute", lambda _d, _m: None)
    try:
        began = time.monotonic()
        with pytest.raises(DriverError, match="closed its stdout"):
            driver.call("hello")
        assert time.monotonic() - began < NOTICED_WITHIN and not driver.alive
    finally:
        driver.close()


def test_a_line_that_never_ends_is_refused_at_its_bound_not_kept_growing() -> None:
    endless = ("import sys\nblock = b'x' * 65536\n"
               f"for _ in range({MAX_LINE // 65536 + 2}):\n"
               "    sys.stdout.buffer.write(block)\n"
               "sys.stdout.flush()\nsys.stdin.readline()\n")
    driver = DriverProcess([sys.executable, "-c", endless], "endless", lambda _d, _m: None)
    try:
        with pytest.raises(DriverError, match=f"longer than {MAX_LINE} bytes"):
            driver.call("hello", timeout=30)
    finally:
        driver.close()


def test_shared_drivers_host_two_groups_in_one_process_and_keep_their_members_apart() -> None:
    pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
    client = quiet("--crash", "kill")
    pool = DriverPool(shared=True)
    first = group_of(client, group="g1", pool=pool)
    second = group_of(client, group="g2", pool=pool)
    try:
        first.join("g1-c1", spec())
        second.join("g2-c1", spec())
        assert len(pool.drivers) == 1  # a kill-crash client, still one process for both
        with pytest.raises(SharedCrash, match="g1-c1 shares its"):
            first.crash("g1-c1")
        assert "g1-c1" in first.members  # refused before anything happened
        first.close()
        driver = second.members["g2-c1"].driver
        assert driver.alive and "g2-c1" in second.members
        time.sleep(0.2)
        assert second.log.incoming == [] and second.log.entries == []  # g1's 'closed' stayed
    finally:
        first.close()
        second.close()
        pool.close()
    assert not driver.alive


def test_groups_placing_members_at_once_on_a_shared_pool_start_one_driver_per_client() -> None:
    client = quiet("--crash", "kill")
    info = ClientInfo(client, "quiet", "0", ("range",), "kip", "kill")
    pool = DriverPool(shared=True)
    placed: list[DriverProcess] = []
    threads = [threading.Thread(target=lambda i=i: placed.append(
        pool.place(info, "", f"g{i}-c1", lambda _d, _m: None))) for i in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(pool.drivers) == 1 and len({id(d) for d in placed}) == 1
    finally:
        pool.close()


def test_a_private_pool_gives_each_kill_crash_member_its_own_driver() -> None:
    group = group_of(quiet("--crash", "kill"))
    try:
        group.join("c1", spec())
        group.join("c2", spec())
        one, two = group.members["c1"].driver, group.members["c2"].driver
        assert one is not two
        group.crash("c1")  # a SIGKILL to c1's driver alone
        assert not one.alive and two.alive and "c1" not in group.members
    finally:
        group.close()


def _infos() -> dict[str, ClientInfo]:
    return {"java": ClientInfo("java", "java", "4", ("range",), "java", "kill"),
            "aiokafka": ClientInfo("aiokafka", "aiokafka", "0", ("range",), "java", "command")}


def test_kill_plans_are_seeded_and_kill_only_members_whose_crash_is_a_sigkill() -> None:
    g = GroupPlan("k0", ("java", "aiokafka", "java", "aiokafka", "java"), "range", kills=2)
    plans = [plan(g, random.Random(seed), _infos()) for seed in range(20)]
    assert plans[3] == plan(g, random.Random(3), _infos())
    for events in plans:
        crashed = [e.member for e in events if isinstance(e, Crash)]
        joined = [e.member for e in events if isinstance(e, Join)]
        assert len(crashed) == 2 and len(set(crashed)) == 2
        assert all(g.clients[joined.index(m)] == "java" for m in crashed)
        for i, event in enumerate(events):
            if isinstance(event, Crash):
                assert event.member in joined[:sum(isinstance(e, Join) for e in events[:i])]
        assert isinstance(events[-1], Settle)
    assert len({str(p) for p in plans}) > 1  # the seed moves the kills
    with pytest.raises(ValueError, match="only 3 members crash by kill"):
        plan(GroupPlan("k1", g.clients, "range", kills=4), random.Random(0), _infos())
