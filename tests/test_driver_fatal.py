"""A poll's error that is fatal to the consumer ends the member's polling in the shipped
Python drivers, as it ends an application's; any other error is reported and polling goes
on."""

from __future__ import annotations

from groupcheck.targets.wire.drivers.fatal import fatal


class FencedInstanceIdError(Exception):
    """Named as kafka-python and aiokafka name theirs."""


class _Error:
    def __init__(self, is_fatal: bool) -> None:
        self.is_fatal = is_fatal

    def fatal(self) -> bool:
        return self.is_fatal


def test_a_fenced_static_member_s_error_is_fatal() -> None:
    assert fatal(FencedInstanceIdError("fenced by i-c1-1"))


def test_an_error_the_client_marks_fatal_is_fatal_and_another_is_not() -> None:
    assert fatal(RuntimeError(_Error(True)))  # librdkafka: KafkaException(KafkaError)
    assert not fatal(RuntimeError(_Error(False)))
    assert not fatal(TimeoutError("request timed out"))
    assert not fatal(RuntimeError())
