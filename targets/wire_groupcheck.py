"""``--broker groupcheck``: groupcheck's own broker (`broker.Broker`) as the wire layer's
cluster backend.

Everything the wire layer asks of a backend the broker already does in process: topics are
created, grown and deleted in its metadata; an injected error is aimed at the one member it
names (the member's client id is its name), so `aims_errors_at_members` is true; the rounds
are the coordinator's own (`Broker.rounds`), with the time the leader's assignment reached
it. A topic a client's Metadata request names is created with one partition, as Kafka's
``auto.create.topics.enable`` and ``num.partitions`` defaults do. The broker accepts the
harness's short session timeouts (its minimum is lowered to 1 ms), and its joins complete
as soon as every known member has rejoined, so no round waits out a session timeout. It has
no defects to work around.
"""

from __future__ import annotations

from .wire_backend import BackendUnavailable, GroupRound

#: the wire layer's API names and error names, as Kafka's API keys and error codes
API_NAMES = {"join": "JoinGroup", "heartbeat": "Heartbeat", "sync": "SyncGroup",
             "leave": "LeaveGroup", "commit": "OffsetCommit"}
ERROR_CODES = {"ILLEGAL_GENERATION": 22, "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27,
               "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16,
               "FENCED_INSTANCE_ID": 82}


class GroupcheckBackend:
    """A fresh broker for one group."""

    name = "groupcheck"
    aims_errors_at_members = True

    def __init__(self, clients: frozenset[str], session_timeout_ms: int) -> None:
        try:
            from ..broker import Broker, BrokerConfig
        except ImportError as exc:
            raise BackendUnavailable(f"groupcheck broker: {exc} (pip install "
                                     "'groupcheck[broker]')") from None
        self.broker = Broker(BrokerConfig(min_session_timeout_ms=1)).start()
        self.bootstrap = self.broker.bootstrap

    @property
    def topics(self) -> dict[str, int]:
        return self.broker.partitions()

    def create_topic(self, topic: str, partitions: int) -> None:
        self.broker.create_topic(topic, partitions)

    def grow_topic(self, topic: str, partitions: int) -> None:
        self.broker.grow_topic(topic, partitions)

    def delete_topic(self, topic: str) -> None:
        self.broker.delete_topic(topic)

    def inject_error(self, api: str, error: str, member: str | None = None) -> None:
        """The named member's next ``api`` request fails with ``error`` (every member's, when
        none is named, as on the mock)."""
        if api not in API_NAMES or error not in ERROR_CODES:
            raise ValueError(f"groupcheck broker: cannot inject {error} on {api}")
        names = [member] if member is not None else sorted(self._member_names())
        for name in names:
            self.broker.fail_next(name, API_NAMES[api], ERROR_CODES[error])

    def _member_names(self) -> set[str]:
        return {r.client_ids[m] for g in self.broker.group_ids() for r in self.broker.rounds(g)
                for m in r.client_ids}

    def rounds(self) -> list[GroupRound]:
        out = []
        for group in self.broker.group_ids():
            for r in self.broker.rounds(group):
                out.append(GroupRound(r.generation, r.protocol, r.leader, dict(r.subscriptions),
                                      dict(r.assignments), dict(r.client_ids), r.complete,
                                      r.leader_sync_ns, frozenset(r.synced)))
        return out

    def joining(self) -> int:
        return sum(self.broker.joins_in_flight(g) for g in self.broker.group_ids())

    def problems(self) -> list[str]:
        """Connections the broker closed (unreadable or unserved requests)."""
        return self.broker.notes()

    def close(self) -> None:
        self.broker.close()
