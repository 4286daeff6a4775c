"""I15: an exception a member's poll() raised to the application, judged from fake driver
messages: the driver tags it, the log keeps the tag, the harness reads the Kafka error each
client's spelling names, and the model calls a retriable one a finding, and one of the
client's own making (a language-level error naming no Kafka error)."""

from __future__ import annotations

import time

import pytest

from groupcheck.broker.faults import ERROR_CODES, FAULTS, RETRIABLE
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import GroupView, RaisedError
from groupcheck.properties.invariants import by_id
from groupcheck.targets.wire.drivers.messages import DriverEvent
from groupcheck.targets.wire.log import WireLog
from groupcheck.targets.wire.raised import kafka_error, raised_error


@pytest.mark.parametrize(("text", "error"), [
    # librdkafka (confluent-kafka's KafkaError)
    ("KafkaException: KafkaError{code=NOT_COORDINATOR,val=16,str=\"Not coordinator\"}",
     "NOT_COORDINATOR"),
    # Kafka's Java client
    ("CoordinatorNotAvailableException: The coordinator is not available.",
     "COORDINATOR_NOT_AVAILABLE"),
    ("GroupAuthorizationException: Not authorized to access group: g",
     "GROUP_AUTHORIZATION_FAILED"),
    # kafka-python: by its code, whatever its class is called in that release
    ("NotCoordinatorForGroupError: [Error 16] NotCoordinatorForGroupError", "NOT_COORDINATOR"),
    ("RebalanceInProgressError: [Error 27] RebalanceInProgressError", "REBALANCE_IN_PROGRESS"),
    ("CommitFailedError: the group has already rebalanced", ""),
])
def test_each_clients_spelling_of_an_error_names_kafkas_error(text: str, error: str) -> None:
    assert kafka_error(text) == error


def test_the_retriable_errors_are_the_tables_retriable_exceptions() -> None:
    assert RETRIABLE <= set(ERROR_CODES)
    assert {f.error for f in FAULTS if f.retriable} == RETRIABLE & {f.error for f in FAULTS}
    assert not any(f.retriable for f in FAULTS if f.error in (
        "REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
        "FENCED_INSTANCE_ID"))


def _logged(*messages: DriverEvent) -> WireLog:
    log = WireLog(lambda _horizon: True)
    for message in messages:
        log.receive(1, message)
    with log.cond:
        log.release()
    return log


def test_the_log_keeps_which_errors_poll_raised_and_which_a_command_did() -> None:
    now = time.monotonic_ns()
    log = _logged(
        {"event": "error", "member": "c1", "seq": 0, "ts": now,
         "message": "CoordinatorLoadInProgressException: loading", "raised_by": "poll"},
        {"event": "error", "member": "c1", "seq": 1, "ts": now + 1,
         "message": "subscribe: ValueError: no topics"})
    assert [(e.kind, e.raised_by) for e in log.entries] == [("error", "poll"), ("error", "")]


def _view(*raised: RaisedError) -> GroupView:
    return GroupView(0, "Empty", None, {}, {}, True, raised=raised)


def test_a_retriable_error_raised_from_poll_is_an_i15_finding() -> None:
    text = "KafkaException: KafkaError{code=COORDINATOR_LOAD_IN_PROGRESS,val=14}"
    out = ReferenceModel().observe(_view(raised_error("c1", text)))
    assert out == [f"I15: c1's poll() raised COORDINATOR_LOAD_IN_PROGRESS to the application, "
                   f"an error its client should retry on its own ({text})"]


def test_an_error_the_application_must_handle_is_no_finding() -> None:
    model = ReferenceModel()
    assert model.observe(_view(
        raised_error("c1", "RebalanceInProgressError: [Error 27] RebalanceInProgressError"),
        raised_error("c2", "CommitFailedError: rebalanced"))) == []


@pytest.mark.parametrize("text", [
    "IllegalStateException: Assignor supporting the COOPERATIVE protocol violates its "
    "requirements",
    "AssertionError: coordinator unknown",
    "KeyError: 't0'",
])
def test_an_exception_of_the_clients_own_making_is_an_i15_finding(text: str) -> None:
    kind = text.split(":")[0]
    out = ReferenceModel().observe(_view(raised_error("c1", text)))
    assert out == [f"I15: c1's poll() raised {kind} to the application, an exception of the "
                   f"client's own making ({text})"]


@pytest.mark.parametrize("text", [
    "GroupAuthorizationException: Not authorized to access group: g",
    "KafkaException: KafkaError{code=_FATAL,val=-150}",
    "IllegalStateException: [Error 16] NotCoordinatorForGroupError",  # names a Kafka error
])
def test_a_kafka_error_or_a_clients_own_exception_type_is_not_of_its_own_making(
        text: str) -> None:
    assert not raised_error("c1", text).internal


def test_i15_is_in_the_table_judged_on_the_wire() -> None:
    assert by_id("I15").judges == ("wire",)
