"""Subscription codecs as targets: ours, a JSON-lines process's, kafka-python's.

A codec target has ``encode_subscription(x, version) -> bytes`` (``x`` in the shape of
``properties/codec.py``: topics, userData, owned, generation, rack) and
``decode_subscription(data) -> message`` (the raw-message view: topics, userData,
ownedPartitions as ``[(topic, [partitions])]``, generationId, rackId, version, remaining);
either raises `CodecFailure` where the codec reports malformed input (Kafka's
``SchemaException``). Anything else it raises is a finding.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol

from ...impl.consumer_protocol import HIGHEST_VERSION, decode_subscription, encode_subscription
from ...impl.errors import CodecError
from ...impl.types import Subscription
from ...properties.codec import Message, SubscriptionInput
from ..profile import ReleaseProfile
from .kafka_python_assignors import subscription_object

__all__ = ["BuiltinCodec", "CodecFailure", "CodecTarget", "JsonlCodec", "KafkaPythonCodec",
           "ReleaseCodec"]


class CodecFailure(ValueError):
    """The codec rejected its input the documented way."""


class CodecTarget(Protocol):
    name: str

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes: ...

    def decode_subscription(self, data: bytes) -> Message: ...


def _message(version: int, topics: list[str], user_data: bytes | None,
             owned: list[tuple[str, list[int]]], generation: int, rack: str | None,
             remaining: int | None) -> Message:
    return {"topics": list(topics), "userData": user_data,
            "ownedPartitions": [(str(t), [int(p) for p in ps]) for t, ps in owned],
            "generationId": int(generation), "rackId": rack, "version": int(version),
            "remaining": None if remaining is None else int(remaining)}


class BuiltinCodec:
    """``impl/consumer_protocol.py``: the builtin targets' codec and the audit's."""

    name = "builtin"
    error: type[Exception] = CodecFailure  # what a malformed input raises (audit I10)
    #: the instance the audit's builtin targets share (the codec holds no state), so that
    #: the audit's I10 check, which keeps its last answer per codec, runs once for all
    _shared: BuiltinCodec | None = None

    @classmethod
    def shared(cls) -> BuiltinCodec:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        return encode_subscription(Subscription(
            list(x["topics"]), x["userData"], [(t, p) for t, p in x["owned"]],
            x["generation"], x["rack"]), version)

    def decode_subscription(self, data: bytes) -> Message:
        try:
            d = decode_subscription(data)
        except CodecError as exc:
            raise CodecFailure(str(exc)) from None
        return _message(d.version, d.topics, d.user_data, d.owned_partitions,
                        d.generation_id, d.rack_id, d.remaining)


class JsonlCodec:
    """The ``encode_subscription`` / ``decode_subscription`` ops of a JSON-lines process."""

    error: type[Exception] = CodecFailure  # what a malformed input raises (audit I10)

    def __init__(self, target: Any) -> None:
        self.target = target
        self.name = target.target

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        user_data = x["userData"]
        answer = self.target.call({
            "op": "encode_subscription", "version": version, "topics": list(x["topics"]),
            "userData": None if user_data is None else base64.b64encode(user_data).decode(),
            "owned": [[t, p] for t, p in x["owned"]], "generation": x["generation"],
            "rack": x["rack"]})
        if "error" in answer:
            raise RuntimeError(f"encode_subscription answered {answer['error']}")
        return bytes.fromhex(answer["hex"])

    def decode_subscription(self, data: bytes) -> Message:
        answer = self.target.call({"op": "decode_subscription", "hex": data.hex()})
        raw = answer.get("data") or {}
        if "error" in answer or "dataError" in answer or not raw:
            raise CodecFailure(str(answer.get("dataError") or answer.get("error")))
        user_data = raw.get("userData")
        return _message(answer.get("version", -1), raw.get("topics") or [],
                        None if user_data is None else base64.b64decode(user_data),
                        [(e["topic"], e["partitions"]) for e in raw.get("ownedPartitions") or []],
                        raw.get("generationId", -1), raw.get("rackId"),
                        answer.get("remaining", 0))


class KafkaPythonCodec:
    """kafka-python's ``ConsumerProtocolSubscription`` encoder and decoder."""

    name = "kafka-python"

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        obj = subscription_object(version, list(x["topics"]), x["userData"],
                                   [(t, p) for t, p in x["owned"]], x["generation"], x["rack"])
        if x["userData"] is None:
            obj.user_data = None
        return bytes(obj.encode())

    def decode_subscription(self, data: bytes) -> Message:
        from kafka.protocol.consumer.metadata import (
            ConsumerProtocolSubscription,
        )

        try:
            d = ConsumerProtocolSubscription.decode(data)
        except Exception as exc:  # noqa: BLE001 - the library signals malformed input so
            raise CodecFailure(f"{type(exc).__name__}: {exc}") from None
        version = int.from_bytes(data[:2], "big", signed=True)
        owned = [(tp.topic, list(tp.partitions)) for tp in getattr(d, "owned_partitions",
                                                                     None) or []]
        generation = getattr(d, "generation_id", -1)
        rack = getattr(d, "rack_id", None)
        user_data = d.user_data
        return _message(version, list(d.topics), None if user_data is None else bytes(user_data),
                        owned, -1 if generation is None else generation, rack, None)


class ReleaseCodec:
    """A release's codec in a group of mixed releases (the codec engine's and the audit's
    I10): a version the
    release writes is written by it, from what its own member holds
    (`profile.ReleaseProfile.as_sent`), any newer version by a newer member (groupcheck's
    codec, byte for byte Kafka's newest); every read is the release's own, held to its
    highest layout (``reader_highest``), and an older writer to the content of its topics
    and owned partitions, not their order (``ordered``)."""

    error: type[Exception] = CodecFailure

    def __init__(self, inner: CodecTarget, profile: ReleaseProfile) -> None:
        self.inner, self.profile = inner, profile
        self.name = getattr(inner, "name", "release")
        self.writes: tuple[int, ...] = tuple(profile.subscription_versions.reads)
        self.reader_highest: int = max(self.writes, default=0)
        self.newer = BuiltinCodec()

    def as_sent(self, x: SubscriptionInput, version: int) -> SubscriptionInput:
        return self.profile.as_sent(x) if version in self.writes else x

    def ordered(self, version: int) -> bool:
        return version not in self.writes or self.reader_highest >= HIGHEST_VERSION

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        if version in self.writes:
            return bytes(self.inner.encode_subscription(self.as_sent(x, version), version))
        return self.newer.encode_subscription(x, version)

    def decode_subscription(self, data: bytes) -> Message:
        return self.inner.decode_subscription(data)
