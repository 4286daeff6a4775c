"""How long a group may take to settle (I11), derived from the protocol's timeouts of that
group: `GroupTimeouts` (what the members run with), `Disturbances` (what happened since the
last settle) and `settle_bound`, the bound in milliseconds with how it was derived.

The formula, each term from a rule of Kafka's classic group protocol:

``bound = abandoned ids × session.timeout.ms
+ rebalances × (heartbeat.interval.ms + rebalance timeout) + Σ delayed answers + margin``

- A member id nobody will use again (a crashed member's, or one its member dropped after an
  UNKNOWN_MEMBER_ID or FENCED answer) stays in the group until its session runs out: the
  coordinator expires a member whose heartbeats stop for ``session.timeout.ms`` (KIP-62
  made that the liveness timer). Each such id is charged a session timeout: ids abandoned
  at different moments of a settle may expire one after another.
- Each rebalance: the members that are not joining learn of it from their next heartbeat's
  REBALANCE_IN_PROGRESS answer (at most ``heartbeat.interval.ms`` away), and the
  coordinator holds the join phase at most the rebalance timeout (the JoinGroup's
  ``rebalanceTimeoutMs``, the client's ``max.poll.interval.ms`` since KIP-62) before it
  completes the generation without those that did not rejoin. The sync phase that follows
  waits for a leader that has just joined.
- ``rebalances`` is I11's allowance: one for the change, two follow-ups for a cooperative
  group (KIP-429), one for a leader that notices new metadata, one per injected error
  answer (its member rejoins).
- A delayed answer costs at most the client's request timeout for that API (the client
  gives the request up then and sends it again: a JoinGroup's timeout is the rebalance
  timeout plus a lapse in Kafka's AbstractCoordinator), or the delay itself when that is
  shorter or the client's timeout is not modelled.
- The margin covers what is not the protocol: processes starting, a loaded machine.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Disturbances", "GroupTimeouts", "SettleBound", "settle_bound"]


@dataclass(frozen=True)
class GroupTimeouts:
    """The protocol's timeouts a group's members run with (ms); a request timeout of None
    is one not modelled for the members' client."""

    session_timeout_ms: int
    rebalance_timeout_ms: int
    heartbeat_interval_ms: int
    join_request_timeout_ms: int | None = None
    sync_request_timeout_ms: int | None = None
    #: what is not the protocol: processes starting, scheduling on a loaded machine
    margin_ms: int = 0

    def request_timeout_ms(self, api: str) -> int | None:
        """The members' request timeout for ``api`` (JoinGroup, SyncGroup), if modelled."""
        return {"JoinGroup": self.join_request_timeout_ms,
                "SyncGroup": self.sync_request_timeout_ms}.get(api)


@dataclass(frozen=True)
class Disturbances:
    """What happened to the group since its last settle, as far as the bound cares."""

    #: rebalances I11 allows this settle
    rebalances: int
    #: member ids abandoned without a LeaveGroup (a crash, an id dropped after an error)
    abandoned: int = 0
    #: answers the coordinator delayed: (API, delay in ms)
    delayed: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class SettleBound:
    """The bound in ms and how it was derived, for the violation message."""

    ms: int
    derivation: str


def _delay_cost(timeouts: GroupTimeouts, api: str, ms: int) -> tuple[int, str]:
    timeout = timeouts.request_timeout_ms(api)
    if timeout is not None and timeout < ms:
        return timeout, f"{api} request timeout {timeout}"
    return ms, f"{api} answer {ms} late"


def settle_bound(timeouts: GroupTimeouts, disturbances: Disturbances) -> SettleBound:
    """The longest a group with ``timeouts`` may take to settle after ``disturbances``
    (the module docstring gives the formula and the rules it comes from)."""
    per_rebalance = timeouts.heartbeat_interval_ms + timeouts.rebalance_timeout_ms
    total = disturbances.rebalances * per_rebalance
    terms = [f"{disturbances.rebalances} rebalances × (heartbeat interval "
             f"{timeouts.heartbeat_interval_ms} + rebalance timeout "
             f"{timeouts.rebalance_timeout_ms})"]
    if disturbances.abandoned:
        total += disturbances.abandoned * timeouts.session_timeout_ms
        terms.insert(0, f"{disturbances.abandoned} abandoned member ids × session timeout "
                        f"{timeouts.session_timeout_ms}")
    for api, ms in disturbances.delayed:
        cost, said = _delay_cost(timeouts, api, ms)
        total += cost
        terms.append(said)
    if timeouts.margin_ms:
        total += timeouts.margin_ms
        terms.append(f"margin {timeouts.margin_ms}")
    return SettleBound(total, " + ".join(terms) + " ms")
