"""``aiokafka:<range|roundrobin|sticky>``: aiokafka's assignors, called as its consumer does.

aiokafka's group coordinator (``aiokafka/consumer/group_coordinator.py``, 0.14) uses an
assignor in exactly three places, and `AiokafkaAssignor` makes those calls and no other:

* **join** — ``metadata(topics)`` for every assignor of the consumer; the
  ``ConsumerProtocolMemberMetadata`` it returns is encoded (subscription v0: topics and user
  data, nothing else) and sent in JoinGroup;
* **leader** — every member's metadata bytes decoded with ``ConsumerProtocol.METADATA`` and
  handed, keyed by member id, to ``assign(cluster, members)`` with the cluster metadata
  (``topics()``, ``partitions_for_topic()``); each result is encoded into SyncGroup;
* **join complete** — the member's bytes decoded with ``ConsumerProtocol.ASSIGNMENT`` and
  passed to ``on_assignment(assignment)``. The generation is never handed over: the
  coordinator does not call the sticky assignor's ``on_generation_assignment``.

`registry` gives it the prover's assign function and the state machine's group through
`python_assignor.PythonTarget` (subscription v0, what aiokafka writes). aiokafka's assignors
are classes used as they are (class methods, state in class
attributes), so consumers in one process share one state; here every consumer gets a
subclass of its own, as consumers in separate processes would (the shared state is a wire
finding, `findings/wire-aiokafka-sticky-shared-state-I6.json`). aiokafka is imported lazily.
"""

from __future__ import annotations

import itertools
from typing import Any

from ...impl.types import Assignment, Cluster, RebalanceProtocol, Subscription
from ..client_assignors import AIOKAFKA as NAMES
from ..client_assignors import assignor_class as client_assignor_class
from .kafka_python_assignors import ClusterView, grouped

__all__ = ["AiokafkaAssignor", "assignor_class", "library_version"]

_instances = itertools.count(1)


def assignor_class(name: str) -> Any:
    """aiokafka's assignor class ``name`` (see `client_assignors.assignor_class`)."""
    return client_assignor_class("aiokafka", NAMES, name)


def _protocol() -> Any:
    from aiokafka.coordinator.protocol import ConsumerProtocol

    return ConsumerProtocol


class AiokafkaAssignor:
    """One consumer's aiokafka assignor (a subclass of its own) behind our protocol."""

    def __init__(self, name: str) -> None:
        base = assignor_class(name)
        inner: Any = type(f"{base.__name__}_{next(_instances)}", (base,), {})  # untyped base
        self.inner = inner
        self.name = str(self.inner.name)
        self.supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def metadata_bytes(self, topics: set[str]) -> bytes:
        """What the consumer sends in JoinGroup (its coordinator's perform_group_join)."""
        metadata = self.inner.metadata(topics)
        return metadata if isinstance(metadata, bytes) else bytes(metadata.encode())

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        decoded = _protocol().METADATA.decode(self.metadata_bytes(topics))
        return bytes(decoded.user_data or b"")

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """``_on_join_complete``: the decoded assignment, never the generation."""
        protocol = _protocol()
        raw = protocol.ASSIGNMENT(0, grouped(list(assignment.partitions)), b"").encode()
        self.inner.on_assignment(protocol.ASSIGNMENT.decode(raw))

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        """``_perform_assignment``: each member's metadata as aiokafka's leader decodes it."""
        protocol = _protocol()
        topics = {t for s in subscriptions.values() for t in s.topics}
        counts = {t: c for t in topics if (c := cluster.partition_count(t)) is not None}
        members = {m: protocol.METADATA.decode(protocol.METADATA(
            0, list(s.topics), s.user_data or b"").encode()) for m, s in subscriptions.items()}
        result = self.inner.assign(ClusterView(counts), members)
        return {m: Assignment([(str(tp.topic), int(tp.partition))
                               for tp in protocol.ASSIGNMENT.decode(a.encode()).partitions()],
                              None)
                for m, a in result.items()}


def library_version() -> str:
    try:
        import aiokafka
    except ImportError:
        return "not installed"
    return str(aiokafka.__version__)
