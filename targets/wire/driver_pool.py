"""Which member driver hosts which member of a wire group, and where each event goes.

Theory of operation: a `DriverPool` starts member drivers (`driver_process.DriverProcess`) and
places members on them. By default — the pool a wire group makes for itself — a member of a
client that crashes by kill (its ``hello`` says ``"crash": "kill"``) gets a driver process of
its own, so that its crash is a SIGKILL to that process alone, and the members of any other
client share one driver. A pool made with ``shared=True`` hosts every member of a client in
one driver whatever its crash mode, and may serve several groups at once (their members
named apart): one JVM for every Java consumer of a run, at the price that a member of a
kill-crash client cannot crash alone (`kill_alone` refuses). Each event a driver writes goes
to the sink its member was placed with, so groups sharing a driver each see their own
members' events only; an event of a member no one placed is dropped. `close` shuts every
driver down at once, each bounded by the contract's shutdown timeout, so closing fifty
drivers takes one driver's shutdown, not fifty. What a closing thread, or a driver's reader, raises
is the pool's `failure`, a harness error for whoever owns the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from ...properties.harness import Failures, ThreadFailure
from .clients import DRIVER_ENV, ClientInfo, argv
from .driver_process import (
    CLOSE_TIMEOUT,
    SHUTDOWN_TIMEOUT,
    CommandFailed,
    DriverError,
    DriverProcess,
)
from .drivers.messages import DriverEvent

__all__ = ["CLOSE_BOUND", "DriverPool", "EventSink", "SharedCrash", "check_alive", "close_all",
           "close_members"]

EventSink = Callable[[DriverProcess, DriverEvent], None]
#: seconds one member's close may take: its ``close`` command, then a driver it had alone
#: shut down (`DriverProcess.close`: shutdown, exit, kill, its reader threads)
CLOSE_BOUND = CLOSE_TIMEOUT + 5 * SHUTDOWN_TIMEOUT


class SharedCrash(ValueError):
    """A member of a kill-crash client shares its driver: it cannot crash alone."""


def close_all(drivers: list[DriverProcess], failures: Failures | None = None) -> None:
    """Shut these drivers down side by side (each bounded: `DriverProcess.close`); what a
    closing thread raises goes to ``failures``."""
    kept = failures if failures is not None else Failures()
    threads = [threading.Thread(target=kept.guard(f"close-{d.label}", d.close), daemon=True,
                                name=f"close-{d.label}") for d in drivers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(CLOSE_BOUND)


def check_alive(hosted: Mapping[str, DriverProcess]) -> None:
    """`DriverError` when a driver that hosts one of these members (name → its driver) has
    died behind the harness's back (its stdout at EOF): a wire group checks whenever it has
    nothing left to show, before it calls itself settled and on each tick of a wait, so a
    dead driver ends the run at once, as the contract's harness error, instead of reading as
    an idle group (I11) a whole step wait later, or as a settled one."""
    dead = next((d for d in hosted.values() if not d.alive), None)
    if dead is not None:
        names = sorted(n for n, d in hosted.items() if d is dead)
        raise DriverError(dead.describe(f"died under {', '.join(names)} ({dead.broken})"))


def close_members(pool: DriverPool, hosted: Mapping[str, DriverProcess]) -> None:
    """Close these members (name → its driver) side by side, each by the client's own
    ``close`` (bounded by the contract's command timeout), and forget them in ``pool``; a
    driver that is already gone has nothing to close."""
    def close(member: str, driver: DriverProcess) -> None:
        try:
            if driver.alive:
                driver.call("close", member=member)
        except (CommandFailed, DriverError):
            pass  # the run is over: the member goes, whatever its client said
        pool.release(driver, member)

    threads = [threading.Thread(target=pool.failures.guard(f"close-{item[0]}", close),
                                args=item, daemon=True) for item in hosted.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(CLOSE_BOUND)


class DriverPool:
    """The drivers of one wire group, or of several when ``shared``."""

    def __init__(self, shared: bool = False) -> None:
        self.shared = shared
        self.drivers: list[DriverProcess] = []
        self._by_client: dict[str, DriverProcess] = {}
        self._sinks: dict[tuple[int, str], EventSink] = {}
        self._hosted: dict[int, set[str]] = {}  # driver → the members placed on it
        self._producers: dict[str, DriverProcess] = {}  # client → a driver that produces
        self._lock = threading.Lock()
        self.failures = Failures()  # of the threads that close members and drivers
        self._closed: list[DriverProcess] = []

    def start(self, client: str, classpath: str = "") -> DriverProcess:
        """A fresh driver of ``client`` that hosts no member (a producer, say)."""
        with self._lock:
            return self._start(client, classpath)

    def _start(self, client: str, classpath: str) -> DriverProcess:
        driver = DriverProcess(argv(client, classpath), client, self._route, DRIVER_ENV)
        self.drivers.append(driver)
        return driver

    def place(self, info: ClientInfo, classpath: str, member: str,
              sink: EventSink) -> DriverProcess:
        """The driver that is to host ``member`` (started when there is none yet, under
        the lock: groups placing members at once share one); the member's events go to
        ``sink`` from now on."""
        alone = info.crash == "kill" and not self.shared
        with self._lock:
            driver = None if alone else self._by_client.get(info.name)
            if driver is None or not driver.alive:
                driver = self._start(info.name, classpath)
                if not alone:
                    self._by_client[info.name] = driver
            self._sinks[(id(driver), member)] = sink
            self._hosted.setdefault(id(driver), set()).add(member)
        return driver

    def forget(self, driver: DriverProcess, member: str) -> None:
        """``member`` is no longer on ``driver``: its later events are dropped."""
        with self._lock:
            self._sinks.pop((id(driver), member), None)
            self._hosted.get(id(driver), set()).discard(member)

    def hosts_others(self, driver: DriverProcess, member: str) -> bool:
        with self._lock:
            return bool(self._hosted.get(id(driver), set()) - {member})

    def kill_alone(self, driver: DriverProcess, member: str) -> None:
        """SIGKILL the driver of ``member``, which must host no one else (`SharedCrash`)."""
        if self.shared or self.hosts_others(driver, member):
            raise SharedCrash(f"wire: {member} shares its {driver.label} driver with other "
                              "members; a pool of shared drivers cannot crash one member of a "
                              "client that crashes by kill")
        self.forget(driver, member)
        driver.kill()

    def release(self, driver: DriverProcess, member: str) -> None:
        """``member`` left: a driver that hosted it alone is shut down (bounded)."""
        self.forget(driver, member)
        with self._lock:
            alone = not self.shared and not self._hosted.get(id(driver)) and \
                driver not in self._by_client.values()
        if alone:
            driver.close()

    def produce(self, client: str, classpath: str, bootstrap: str, topic: str,
                partition: int) -> None:
        """One record written by a driver of ``client`` that hosts no member; a producer
        that fails (its metadata predates a topic's growth, say) is replaced by a fresh one
        for the next record, and left running until the pool closes: other threads may be
        writing through it still (closing it under them failed a whole fault run)."""
        for attempt in (1, 2):
            with self._lock:
                producer = self._producers.get(client)
            if producer is None or not producer.alive:
                producer = self._fresh_producer(client, classpath, producer)
            try:
                producer.call("produce", bootstrap=bootstrap, topic=topic,
                              partition=partition, value="groupcheck")
                return
            except (CommandFailed, DriverError):
                with self._lock:
                    if self._producers.get(client) is producer:
                        del self._producers[client]
                if attempt == 2:
                    raise

    def _fresh_producer(self, client: str, classpath: str,
                        stale: DriverProcess | None) -> DriverProcess:
        """The client's producer: a new one, unless another thread replaced ``stale``
        first."""
        with self._lock:
            current = self._producers.get(client)
            if current is not None and current is not stale and current.alive:
                return current
            producer = self._producers[client] = self._start(client, classpath)
            return producer

    def _route(self, driver: DriverProcess, message: DriverEvent) -> None:
        with self._lock:
            sink = self._sinks.get((id(driver), str(message.get("member", ""))))
        if sink is not None:
            sink(driver, message)

    def close(self) -> None:
        """Shut every driver down, side by side."""
        with self._lock:
            drivers, self.drivers = list(self.drivers), []
            self._closed += drivers
            self._by_client.clear()
            self._producers.clear()
            self._sinks.clear()
        close_all(drivers, self.failures)

    def failure(self) -> ThreadFailure | None:
        """The first failure of a thread of the pool's or of one of its drivers' readers."""
        with self._lock:
            drivers = self.drivers + self._closed
        found = [self.failures.first, *(d.failures.first for d in drivers)]
        return next((f for f in found if f is not None), None)
