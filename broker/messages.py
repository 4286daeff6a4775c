"""The plain data of the broker's responses, one TypedDict per API (and its parts), as the
handlers make it and `protocol.build` turns it into kio's entity for the version asked.

A handler writes every field any served version of its response has; `build` keeps those
the version's kio class has and drops the rest (``rack`` before Metadata v1, say). Fields
are named as in Kafka's JSON schemas, in kio's spelling.
"""

from __future__ import annotations

import uuid
from typing import NotRequired, TypedDict

__all__ = ["ApiVersionsData", "BrokerData", "CreateTopicsData", "DescribeGroupsData",
           "DescribedGroup", "FetchData", "FindCoordinatorData", "GroupData",
           "InitProducerIdData", "ListGroupsData", "ListOffsetsData", "MetadataData",
           "OffsetCommitData", "OffsetFetchData", "OffsetFetchGroup", "ProduceData",
           "ResponseData", "TopicMetadata"]


class BrokerData(TypedDict):
    node_id: int
    host: str
    port: int
    rack: str | None


class PartitionMetadata(TypedDict):
    error_code: int
    partition_index: int
    leader_id: int
    leader_epoch: int
    replica_nodes: list[int]
    isr_nodes: list[int]
    offline_replicas: list[int]


class TopicMetadata(TypedDict):
    error_code: int
    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: list[PartitionMetadata]
    topic_authorized_operations: NotRequired[int]


class MetadataData(TypedDict):
    throttle_time: int
    brokers: list[BrokerData]
    cluster_id: str
    controller_id: int
    topics: list[TopicMetadata]
    cluster_authorized_operations: int


class Coordinator(TypedDict):
    key: str
    error_code: int
    error_message: str | None
    node_id: int
    host: str
    port: int
    rack: NotRequired[str | None]


class FindCoordinatorData(TypedDict, total=False):
    """Below v4 one coordinator at the top level; from v4 one per key (KIP-699)."""

    throttle_time: int
    error_code: int
    error_message: str | None
    node_id: int
    host: str
    port: int
    rack: str | None
    coordinators: list[Coordinator]


class CreatedTopic(TypedDict):
    name: str
    error_code: int
    error_message: str | None
    num_partitions: int
    replication_factor: int
    topic_id: uuid.UUID | None
    configs: list[object]


class CreateTopicsData(TypedDict):
    throttle_time: int
    topics: list[CreatedTopic]


class PartitionOffset(TypedDict):
    partition_index: int
    error_code: int
    timestamp: int
    offset: int
    leader_epoch: int


class TopicOffsets(TypedDict):
    name: str
    partitions: list[PartitionOffset]


class ListOffsetsData(TypedDict):
    throttle_time: int
    topics: list[TopicOffsets]


class PartitionProduced(TypedDict):
    index: int
    error_code: int
    base_offset: int
    log_append_time: int | None
    log_start_offset: int
    record_errors: list[object]
    error_message: str | None


class TopicProduced(TypedDict):
    name: str
    partition_responses: list[PartitionProduced]


class ProduceData(TypedDict):
    responses: list[TopicProduced]
    throttle_time: int


class PartitionFetched(TypedDict):
    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted_transactions: list[object] | None
    preferred_read_replica: int
    records: bytes


class TopicFetched(TypedDict):
    topic: str
    partitions: list[PartitionFetched]


class FetchData(TypedDict):
    throttle_time: int
    error_code: int
    session_id: int
    responses: list[TopicFetched]


class PartitionCommitted(TypedDict):
    partition_index: int
    error_code: int


class TopicCommitted(TypedDict):
    name: str
    partitions: list[PartitionCommitted]


class OffsetCommitData(TypedDict):
    throttle_time: int
    topics: list[TopicCommitted]


class PartitionFetchedOffset(TypedDict):
    partition_index: int
    error_code: int
    committed_offset: int
    committed_leader_epoch: int
    metadata: str | None


class TopicFetchedOffsets(TypedDict):
    name: str
    partitions: list[PartitionFetchedOffset]


class OffsetFetchGroup(TypedDict):
    group_id: str
    topics: list[TopicFetchedOffsets]
    error_code: int


class OffsetFetchData(TypedDict, total=False):
    """Below v8 one group's fields at the top level; from v8 several groups (KIP-709)."""

    throttle_time: int
    group_id: str
    topics: list[TopicFetchedOffsets]
    error_code: int
    groups: list[OffsetFetchGroup]


class InitProducerIdData(TypedDict):
    throttle_time: int
    error_code: int
    producer_id: int
    producer_epoch: int


class ApiRange(TypedDict):
    api_key: int
    min_version: int
    max_version: int


class ApiVersionsData(TypedDict):
    error_code: int
    throttle_time: int
    api_keys: list[ApiRange]


class GroupMember(TypedDict, total=False):
    """A member in a JoinGroup answer (``metadata``) or a LeaveGroup answer
    (``error_code``)."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes
    error_code: int


class GroupData(TypedDict, total=False):
    """JoinGroup, SyncGroup, Heartbeat and LeaveGroup answers: each writes its fields (an
    answer steering fails writes those of every one of them)."""

    throttle_time: int
    error_code: int
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str
    skip_assignment: bool
    member_id: str
    members: list[GroupMember]
    assignment: bytes


class DescribedMember(TypedDict):
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


class DescribedGroup(TypedDict):
    error_code: int
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: list[DescribedMember]
    authorized_operations: NotRequired[int]


class DescribeGroupsData(TypedDict):
    throttle_time: int
    groups: list[DescribedGroup]


class ListedGroup(TypedDict):
    group_id: str
    protocol_type: str
    group_state: str
    group_type: str


class ListGroupsData(TypedDict):
    throttle_time: int
    error_code: int
    groups: list[ListedGroup]


#: any response's plain data
ResponseData = (MetadataData | FindCoordinatorData | CreateTopicsData | ListOffsetsData
                | ProduceData | FetchData | OffsetCommitData | OffsetFetchData
                | InitProducerIdData | ApiVersionsData | GroupData | DescribeGroupsData
                | ListGroupsData)
