"""A deterministic in-memory network between consumers and the group coordinator.

Messages are `Envelope`s in flight on links named by (source, destination). Nothing is
delivered until the driver says so: `deliver_next` takes the oldest message, `deliver(i)`
any one (a reordering), `drop(i)` loses one, `hold(link)` delays a whole link until
`release(link)`. Delivery order is otherwise first-in, first-out, so the same calls give
the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

from .group_messages import Envelope

__all__ = ["COORDINATOR", "InFlight", "Network"]

COORDINATOR = "coordinator"


@dataclass(frozen=True)
class InFlight:
    source: str
    destination: str
    envelope: Envelope
    seq: int


class Network:
    """Messages in flight, in the order they were sent."""

    def __init__(self) -> None:
        self._in_flight: list[InFlight] = []
        self._held: set[tuple[str, str]] = set()
        self._seq = 0
        self.delivered = 0
        self.dropped = 0

    def send(self, source: str, destination: str, envelope: Envelope) -> None:
        self._seq += 1
        self._in_flight.append(InFlight(source, destination, envelope, self._seq))

    def deliverable(self) -> list[InFlight]:
        """Messages that may be delivered now (not on a held link), oldest first."""
        return [m for m in self._in_flight if (m.source, m.destination) not in self._held]

    def deliver_next(self) -> InFlight | None:
        ready = self.deliverable()
        return self._take(ready[0]) if ready else None

    def deliver(self, index: int) -> InFlight:
        """Deliver the ``index``-th deliverable message (reordering the others)."""
        return self._take(self.deliverable()[index])

    def drop(self, index: int) -> InFlight:
        message = self.deliverable()[index]
        self._in_flight.remove(message)
        self.dropped += 1
        return message

    def drop_link(self, source: str, destination: str) -> int:
        """Lose everything in flight on one link (a broken connection)."""
        lost = [m for m in self._in_flight if (m.source, m.destination) == (source, destination)]
        for m in lost:
            self._in_flight.remove(m)
        self.dropped += len(lost)
        return len(lost)

    def hold(self, source: str, destination: str) -> None:
        self._held.add((source, destination))

    def release(self, source: str, destination: str) -> None:
        self._held.discard((source, destination))

    def idle(self) -> bool:
        return not self.deliverable()

    def _take(self, message: InFlight) -> InFlight:
        self._in_flight.remove(message)
        self.delivered += 1
        return message
