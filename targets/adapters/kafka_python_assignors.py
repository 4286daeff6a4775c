"""``kafka-python:<range|roundrobin|sticky|cooperative-sticky>``: that library's assignors.

`KafkaPythonAssignor` wraps one instance of ``kafka.coordinator.assignors.*`` in our assignor
protocol, keeping everything the library really does on the wire:

* **Subscription version.** kafka-python sends ``ConsumerProtocolSubscription`` at its
  assignor's ``version``: 0 for range, roundrobin and sticky, 1 for cooperative-sticky (no
  ``GenerationId`` field, which only exists from v2: bug zoo A.2-1). `SUBSCRIPTION_VERSIONS`
  gives these to the engines, so our consumers encode what kafka-python would.
* **User data.** What ``metadata(topics)`` puts in ``user_data``, encoded by the library
  (sticky: its ``StickyAssignorUserData`` with a version header; cooperative: empty).
* **The leader.** ``assign`` rebuilds each member's subscription as kafka-python's leader
  decodes it (``ConsumerProtocolSubscription`` objects, owned partitions grouped per topic,
  ``generation_id`` as read) and hands the library a cluster view with ``topics()`` and
  ``partitions_for_topic()``.

The assign function (`KafkaPythonTarget.assign`) goes further and uses kafka-python's own
codec end to end: every member's ``metadata()`` is encoded with the library's encoder at the
version it chose and decoded with the library's decoder, as its leader does.

kafka-python is imported lazily; a missing library is a `client_assignors.TargetUnavailable` error.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from ...impl.types import Assignment, Cluster, RebalanceProtocol, Subscription, TopicPartition
from ...properties.group import GroupTarget
from ...properties.jsonl_shapes import AssignAnswer, AssignRequest, RequestMember
from ..client_assignors import KAFKA_PYTHON, assignor_class
from .python_assignor import group_factory

__all__ = ["NAMES", "SUBSCRIPTION_VERSIONS", "ClusterView", "KafkaPythonAssignor",
           "KafkaPythonTarget", "grouped", "library_version",
           "subscription_object"]

NAMES = KAFKA_PYTHON
#: the ConsumerProtocolSubscription version each assignor really sends
SUBSCRIPTION_VERSIONS = {"range": 0, "roundrobin": 0, "sticky": 0, "cooperative-sticky": 1}


def _assignor_class(name: str) -> Any:
    return assignor_class("kafka-python", NAMES, name)


def library_version() -> str:
    try:
        import kafka
    except ImportError:
        return "not installed"
    return str(getattr(kafka, "__version__", "?"))


class ClusterView:
    """The two calls kafka-python's assignors make on ``ClusterMetadata``."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self._partitions = {t: c for t, c in partitions.items() if c > 0}

    def topics(self) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._partitions.get(topic)
        return None if count is None else set(range(count))


class _JoinedMember:
    """``JoinGroupResponseMember`` as the leader sees it after decoding."""

    def __init__(self, member_id: str, group_instance_id: str | None, metadata: Any) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = metadata

    def __repr__(self) -> str:
        return f"Member({self.member_id!r}, {self.metadata!r})"


def grouped(partitions: list[TopicPartition]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)
    return list(by_topic.items())


def _user_data_bytes(user_data: Any) -> bytes:
    """kafka-python keeps user data as bytes or as an ApiData object it encodes on send."""
    if user_data is None:
        return b""
    if isinstance(user_data, (bytes, bytearray)):
        return bytes(user_data)
    return bytes(user_data.encode())


def subscription_object(version: int, topics: list[str], user_data: bytes | None,
                         owned: list[TopicPartition], generation: int | None,
                         rack: str | None) -> Any:
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolSubscription,
    )

    owned_entries = [ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
                     for t, ps in grouped(owned)]
    return ConsumerProtocolSubscription(
        version=version, topics=list(topics), user_data=user_data or b"",
        owned_partitions=owned_entries,
        generation_id=-1 if generation is None else generation, rack_id=rack)


def _assignment_object(partitions: list[TopicPartition], generation_unused: int = 0) -> Any:
    from kafka.protocol.consumer.metadata import (
        ConsumerProtocolAssignment,
    )

    return ConsumerProtocolAssignment(version=0, assigned_partitions=grouped(partitions),
                                      user_data=b"")


def _partitions_of(assignment: Any) -> list[TopicPartition]:
    return [(str(tp.topic), int(tp.partition)) for tp in assignment.partitions()]


class KafkaPythonAssignor:
    """One kafka-python assignor instance behind our assignor protocol."""

    def __init__(self, name: str) -> None:
        self.inner = _assignor_class(name)()
        self.name = str(self.inner.name)
        protocols = [RebalanceProtocol(int(p)) for p in self.inner.supported_protocols()]
        # kafka-python lists them in preference order; ours are chosen by max()
        self.supported_protocols: tuple[RebalanceProtocol, ...] = tuple(protocols)
        self.version = int(getattr(self.inner, "version", 0))

    def metadata(self, topics: set[str]) -> Any:
        return self.inner.metadata(topics)

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return _user_data_bytes(self.metadata(topics).user_data)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.inner.on_assignment(_assignment_object(list(assignment.partitions)), generation)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        topics = {t for s in subscriptions.values() for t in s.topics}
        counts = {t: c for t in topics if (c := cluster.partition_count(t)) is not None}
        members = [
            _JoinedMember(m, s.group_instance_id, subscription_object(
                3, list(s.topics), s.user_data, list(s.owned_partitions), s.generation_id,
                s.rack_id))
            for m, s in subscriptions.items()]
        return self.assign_members(ClusterView(counts), members)

    def assign_members(self, cluster: ClusterView,
                       members: list[_JoinedMember]) -> dict[str, Assignment]:
        result = self.inner.assign(cluster, members)
        return {m: Assignment(_partitions_of(a), _user_data_bytes(a.user_data) or None)
                for m, a in result.items()}


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


class KafkaPythonTarget:
    """``kafka-python:<name>``: assign function and group factory."""

    def __init__(self, target: str, name: str) -> None:
        self.target = target
        self.name = name
        sample = KafkaPythonAssignor(name)
        self.assignor = sample.name
        self.subscription_version = SUBSCRIPTION_VERSIONS[name]
        self.cooperative = max(sample.supported_protocols) is RebalanceProtocol.COOPERATIVE

    def make(self) -> KafkaPythonAssignor:
        return KafkaPythonAssignor(self.name)

    def _client_member(self, member_id: str, member: RequestMember) -> _JoinedMember:
        """A kafka-python consumer's JoinGroup metadata, encoded and decoded by the library."""
        from kafka.protocol.consumer.metadata import (
            ConsumerProtocolSubscription,
        )

        instance = self.make()
        topics = [str(t) for t in member.get("topics") or []]
        owned = [(str(t), int(p)) for t, p in member.get("owned") or []]
        generation = member.get("generation")
        if generation is not None:
            instance.on_assignment(Assignment(owned), int(generation))
        metadata = instance.metadata(set(topics))
        user_data = member.get("userData")
        if user_data is not None:
            metadata.user_data = base64.b64decode(user_data)
        wire = metadata.encode()
        return _JoinedMember(member_id, member.get("groupInstanceId"),
                       ConsumerProtocolSubscription.decode(wire))

    def _raw_member(self, member_id: str, member: RequestMember) -> _JoinedMember:
        user_data = member.get("userData")
        return _JoinedMember(member_id, member.get("groupInstanceId"), subscription_object(
            3, [str(t) for t in member.get("topics") or []],
            None if user_data is None else base64.b64decode(user_data),
            [(str(t), int(p)) for t, p in member.get("owned") or []],
            member.get("generation"), member.get("rack")))

    def assign(self, request: AssignRequest) -> AssignAnswer:
        """The JSON-lines ``assign`` request, answered by kafka-python."""
        members_in = request.get("members") or {}
        mode = request.get("mode", "client")
        build = self._client_member if mode == "client" else self._raw_member
        members = [build(m, v) for m, v in members_in.items()]
        leader = self.make()
        started = time.perf_counter()
        result = leader.assign_members(ClusterView(dict(request.get("partitions") or {})),
                                       members)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        asked = request.get("newGeneration")
        if asked is not None:
            generation = int(asked)
        else:
            generation = max([g for v in members_in.values()
                              if (g := v.get("generation")) is not None], default=0) + 1
        user_data: dict[str, str | None] = {}
        for member_id, assignment in result.items():
            instance = self.make()
            instance.on_assignment(assignment, generation)
            member = members_in.get(member_id)
            topics = set(member["topics"] if member is not None else [])
            user_data[member_id] = _b64(instance.subscription_user_data(topics))
        return {
            "assignment": {m: [[t, p] for t, p in a.partitions] for m, a in result.items()},
            "userData": user_data,
            "assignmentUserData": {m: _b64(a.user_data) for m, a in result.items()},
            "generation": generation,
            "protocol": max(leader.supported_protocols).name,
            "ms": round(elapsed_ms, 3),
        }

    def group_factory(self) -> Callable[[], GroupTarget]:
        return group_factory(self.target, self.assignor, self.make)
