"""The broker's non-group APIs: Metadata, FindCoordinator, CreateTopics, ListOffsets,
Produce, Fetch, OffsetCommit and OffsetFetch, each as plain data for the version asked.

What lives here: `ClusterState` (the broker's address, topics, committed offsets, groups and
auto-creation setting) and one function per API taking the decoded kio request and
returning the response's plain data (`protocol.build` makes the kio entity).

Theory of operation: one broker, node 0, is the leader of every partition (epoch 0, in sync
alone) and the coordinator of every group. It may present itself as more nodes (each its own
port, all in Metadata): node 0 still leads every partition, and a group's coordinator is
node 0 until steering moves it (``coordinators``); FindCoordinator names it. A topic unknown
to Metadata is created when the broker auto-creates and the client allows it; Produce never
creates. Fetch here only reads: the wait for data (``max_wait``, ``min_bytes``) is the
server's. Offsets of a group with members are accepted only from a current member at the
current generation (as Kafka's classic group does); a group without members takes any commit
("simple" consumers and admin tools).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..impl.coordinator_state import GroupState
from .group_apis import GroupHub
from .messages import (
    BrokerData,
    CreatedTopic,
    CreateTopicsData,
    FetchData,
    FindCoordinatorData,
    InitProducerIdData,
    ListOffsetsData,
    MetadataData,
    OffsetCommitData,
    OffsetFetchData,
    OffsetFetchGroup,
    PartitionCommitted,
    PartitionFetched,
    PartitionFetchedOffset,
    PartitionMetadata,
    PartitionOffset,
    PartitionProduced,
    ProduceData,
    ResponseData,
    TopicCommitted,
    TopicFetched,
    TopicFetchedOffsets,
    TopicMetadata,
    TopicOffsets,
    TopicProduced,
)
from .store import Committed, Offsets, StoreError, Topics

__all__ = ["HANDLERS", "ClusterState", "create_topics", "fetch", "find_coordinator",
           "init_producer_id", "list_offsets", "metadata", "offset_commit", "offset_fetch",
           "produce"]

_NODE_ID = 0
_CLUSTER_ID = "groupcheck-broker"
_UNKNOWN_TOPIC_OR_PARTITION = 3
_COORDINATOR_NOT_AVAILABLE = 15
_ILLEGAL_GENERATION = 22
_UNKNOWN_MEMBER_ID = 25
_REBALANCE_IN_PROGRESS = 27
_INVALID_REQUEST = 42
_TRANSACTIONS_NOT_SERVED = 53  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED: no transactions here


@dataclass
class ClusterState:
    host: str
    port: int
    topics: Topics
    offsets: Offsets
    groups: GroupHub
    clock: Callable[[], int]
    auto_create_partitions: int | None = 1  # None: no auto-creation
    producer_ids: int = 999
    ports: list[int] = field(default_factory=list)  # of nodes 1.. (node 0's is ``port``)
    coordinators: dict[str, int] = field(default_factory=dict)  # group -> node, when not 0

    def broker(self, node: int = _NODE_ID) -> BrokerData:
        if not 0 <= node <= len(self.ports):
            raise ValueError(f"no node {node}: the broker is nodes 0-{len(self.ports)}")
        port = self.port if node == _NODE_ID else self.ports[node - 1]
        return {"node_id": node, "host": self.host, "port": port, "rack": None}

    def brokers(self) -> list[BrokerData]:
        return [self.broker(node) for node in range(1 + len(self.ports))]

    def coordinator_of(self, group_id: str) -> int:
        return self.coordinators.get(group_id, _NODE_ID)

    def move(self, group_id: str, node: int | None = None) -> int:
        """Make ``node`` (None: the next one) the group's coordinator; the node."""
        count = 1 + len(self.ports)
        target = (self.coordinator_of(group_id) + 1) % count if node is None else node
        if not 0 <= target < count:
            raise ValueError(f"cannot move group {group_id!r}'s coordinator to node {target}: "
                             f"the broker is nodes 0-{count - 1}")
        self.coordinators[group_id] = target
        return target


def _partition_meta(index: int) -> PartitionMetadata:
    return {"error_code": 0, "partition_index": index, "leader_id": _NODE_ID,
            "leader_epoch": 0, "replica_nodes": [_NODE_ID], "isr_nodes": [_NODE_ID],
            "offline_replicas": []}


def _topic_meta(cluster: ClusterState, name: str) -> TopicMetadata:
    if name not in cluster.topics:
        return {"error_code": _UNKNOWN_TOPIC_OR_PARTITION, "name": name, "topic_id": None,
                "is_internal": False, "partitions": []}
    topic = cluster.topics.get(name)
    return {"error_code": 0, "name": name, "topic_id": topic.topic_id, "is_internal": False,
            "partitions": [_partition_meta(i) for i in range(len(topic.partitions))],
            "topic_authorized_operations": -2147483648}


def metadata(cluster: ClusterState, version: int, body: Any) -> MetadataData:
    """All topics when the request names none (null, or empty before v1)."""
    if body.topics is None or (version == 0 and not body.topics):
        names = cluster.topics.names()
    else:
        names = [t.name for t in body.topics]
        allow = version < 4 or bool(body.allow_auto_topic_creation)
        for name in names:
            if (name and name not in cluster.topics and allow
                    and cluster.auto_create_partitions is not None):
                cluster.topics.create(name, cluster.auto_create_partitions, cluster.clock())
    return {"throttle_time": 0, "brokers": cluster.brokers(), "cluster_id": _CLUSTER_ID,
            "controller_id": _NODE_ID, "topics": [_topic_meta(cluster, n) for n in names],
            "cluster_authorized_operations": -2147483648}


def find_coordinator(cluster: ClusterState, version: int, body: Any) -> FindCoordinatorData:
    """The group's coordinator node for every key; v4+ batches keys (KIP-699)."""
    if version < 4:
        node = cluster.broker(cluster.coordinator_of(body.key))
        return {"throttle_time": 0, "error_code": 0, "error_message": None,
                "node_id": node["node_id"], "host": node["host"], "port": node["port"],
                "rack": node["rack"]}
    return {"throttle_time": 0, "coordinators": [
        {"key": key, "error_code": 0, "error_message": None,
         **cluster.broker(cluster.coordinator_of(key))} for key in body.coordinator_keys]}


def create_topics(cluster: ClusterState, version: int, body: Any) -> CreateTopicsData:
    out = []
    for t in body.topics:
        count = int(t.num_partitions)
        count = cluster.auto_create_partitions or 1 if count == -1 else count
        entry: CreatedTopic = {"name": t.name, "error_code": 0, "error_message": None,
                               "num_partitions": count, "replication_factor": 1,
                               "topic_id": None, "configs": []}
        try:
            if not body.validate_only:
                entry["topic_id"] = cluster.topics.create(t.name, count, cluster.clock()).topic_id
        except StoreError as e:
            entry.update({"error_code": e.code, "error_message": str(e), "num_partitions": -1,
                          "replication_factor": -1})
        out.append(entry)
    return {"throttle_time": 0, "topics": out}


def list_offsets(cluster: ClusterState, version: int, body: Any) -> ListOffsetsData:
    topics: list[TopicOffsets] = []
    for t in body.topics:
        parts: list[PartitionOffset] = []
        for p in t.partitions:
            entry: PartitionOffset = {"partition_index": p.partition_index, "error_code": 0,
                                      "timestamp": -1, "offset": -1, "leader_epoch": 0}
            try:
                log = cluster.topics.partition(t.name, p.partition_index)
                entry["offset"] = log.offset_for_time(int(p.timestamp))
            except StoreError as e:
                entry["error_code"] = e.code
            parts.append(entry)
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}


def produce(cluster: ClusterState, version: int, body: Any) -> ProduceData:
    responses: list[TopicProduced] = []
    for t in body.topic_data:
        parts: list[PartitionProduced] = []
        for p in t.partition_data:
            entry: PartitionProduced = {"index": p.index, "error_code": 0, "base_offset": -1,
                                        "log_append_time": None, "log_start_offset": -1,
                                        "record_errors": [], "error_message": None}
            try:
                log = cluster.topics.partition(t.name, p.index)
                entry["base_offset"] = log.append(bytes(p.records or b""),
                                                  cluster.topics.bytes_per_partition)
                entry["log_start_offset"] = log.log_start
            except StoreError as e:
                entry.update({"error_code": e.code, "error_message": str(e)})
            parts.append(entry)
        responses.append({"name": t.name, "partition_responses": parts})
    return {"responses": responses, "throttle_time": 0}


def fetch(cluster: ClusterState, version: int, body: Any) -> tuple[FetchData, int]:
    """The data now available, and its size in bytes (the server waits on the size)."""
    budget = int(body.max_bytes) if version >= 3 else 2**31 - 1
    total = 0
    responses: list[TopicFetched] = []
    for t in body.topics:
        parts: list[PartitionFetched] = []
        for p in t.partitions:
            entry: PartitionFetched = {"partition_index": p.partition, "error_code": 0,
                                       "high_watermark": -1, "last_stable_offset": -1,
                                       "log_start_offset": -1, "aborted_transactions": None,
                                       "preferred_read_replica": -1, "records": b""}
            try:
                log = cluster.topics.partition(t.topic, p.partition)
                entry.update({"high_watermark": log.high_watermark,
                              "last_stable_offset": log.high_watermark,
                              "log_start_offset": log.log_start})
                limit = min(int(p.partition_max_bytes), max(budget - total, 0))
                data = log.read(int(p.fetch_offset), limit) if limit > 0 or total == 0 else b""
                entry["records"] = data
                total += len(data)
            except StoreError as e:
                entry["error_code"] = e.code
            parts.append(entry)
        responses.append({"topic": t.topic, "partitions": parts})
    return {"throttle_time": 0, "error_code": 0, "session_id": 0, "responses": responses}, total


def _commit_error(cluster: ClusterState, group_id: str, generation: int, member_id: str,
                  instance_id: str | None) -> int:
    """Kafka's classic offset-commit validation, against the coordinator's view."""
    coordinator = cluster.groups.get(group_id)
    if coordinator is None:
        return 0 if generation < 0 else _ILLEGAL_GENERATION if member_id else _UNKNOWN_MEMBER_ID
    if coordinator.state is GroupState.DEAD:
        return _COORDINATOR_NOT_AVAILABLE
    if generation >= 0 or member_id or instance_id is not None:
        refused = coordinator.member_error(member_id, instance_id)
        if refused is not None:
            return refused.value
        if generation != coordinator.generation_id:
            return _ILLEGAL_GENERATION
        if coordinator.state is GroupState.COMPLETING_REBALANCE:
            return _REBALANCE_IN_PROGRESS
        return 0
    return 0 if coordinator.state is GroupState.EMPTY else _UNKNOWN_MEMBER_ID


def offset_commit(cluster: ClusterState, version: int, body: Any) -> OffsetCommitData:
    generation = int(body.generation_id_or_member_epoch) if version >= 1 else -1
    instance_id = body.group_instance_id if version >= 7 else None
    error = _commit_error(cluster, body.group_id, generation, body.member_id, instance_id)
    topics: list[TopicCommitted] = []
    for t in body.topics:
        parts: list[PartitionCommitted] = []
        for p in t.partitions:
            code = error
            if code == 0 and (t.name not in cluster.topics
                              or p.partition_index >= len(cluster.topics.get(t.name).partitions)):
                code = _UNKNOWN_TOPIC_OR_PARTITION
            if code == 0:
                epoch = int(p.committed_leader_epoch) if version >= 6 else -1
                cluster.offsets.commit(body.group_id, t.name, p.partition_index, Committed(
                    int(p.committed_offset), p.committed_metadata, epoch))
            parts.append({"partition_index": p.partition_index, "error_code": code})
        topics.append({"name": t.name, "partitions": parts})
    return {"throttle_time": 0, "topics": topics}


def _fetch_group(cluster: ClusterState, group_id: str, topics: Any) -> OffsetFetchGroup:
    """One group's committed offsets: the topics asked, or every committed one (null)."""
    committed = cluster.offsets.of_group(group_id)
    if topics is None:
        wanted: dict[str, list[int]] = {}
        for topic, partition in sorted(committed):
            wanted.setdefault(topic, []).append(partition)
    else:
        wanted = {t.name: list(t.partition_indexes) for t in topics}
    out: list[TopicFetchedOffsets] = []
    for name, partitions in wanted.items():
        parts: list[PartitionFetchedOffset] = []
        for p in partitions:
            entry = committed.get((name, p))
            parts.append({"partition_index": p, "error_code": 0,
                          "committed_offset": entry.offset if entry else -1,
                          "committed_leader_epoch": entry.leader_epoch if entry else -1,
                          "metadata": entry.metadata if entry else ""})
        out.append({"name": name, "partitions": parts})
    return {"group_id": group_id, "topics": out, "error_code": 0}


def offset_fetch(cluster: ClusterState, version: int, body: Any) -> OffsetFetchData:
    """v8+ asks for several groups at once (KIP-709)."""
    if version >= 8:
        return {"throttle_time": 0, "groups": [_fetch_group(cluster, g.group_id, g.topics)
                                               for g in body.groups]}
    group = _fetch_group(cluster, body.group_id, body.topics)
    return {"throttle_time": 0, "group_id": group["group_id"], "topics": group["topics"],
            "error_code": group["error_code"]}


def init_producer_id(cluster: ClusterState, version: int, body: Any) -> InitProducerIdData:
    """A fresh producer id, epoch 0, for idempotent producers (kafka-python's and Java's
    default); transactions are not served and sequence numbers are not checked."""
    if body.transactional_id is not None:
        return {"throttle_time": 0, "error_code": _TRANSACTIONS_NOT_SERVED, "producer_id": -1,
                "producer_epoch": -1}
    cluster.producer_ids += 1
    return {"throttle_time": 0, "error_code": 0, "producer_id": cluster.producer_ids,
            "producer_epoch": 0}


#: API key → handler; Fetch is the server's (it waits) and the group APIs are the hub's.
HANDLERS: dict[int, Callable[[ClusterState, int, Any], ResponseData]] = {
    0: produce, 2: list_offsets, 3: metadata, 8: offset_commit, 9: offset_fetch,
    10: find_coordinator, 19: create_topics, 22: init_producer_id,
}
