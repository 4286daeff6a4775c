"""A resolved target as the ops of a JSON-lines server (``impl.jsonl_served``): what
``groupcheck jsonl --target T`` answers, so that any target with an assign function runs as
a process, ``jsonl:groupcheck jsonl --target T``.

The server runs the target's assignor under its name (a target that offers several, such as
``python:pkg.module``, runs each of them) through the target's own assign function and
assignor objects, and writes and reads subscriptions with the target's codec where it has
a method of its own (not groupcheck's). A codec-only target (a codec mutant) is a client
whose codec is that one: its server runs groupcheck's four assignors beside it. A target
with neither an assign function nor a codec (a group-only mutant, a wire group) has nothing
the contract serves.
"""

from __future__ import annotations

from ..impl.assign_op import assign_with
from ..impl.assignors import make_assignor
from ..impl.consumer_protocol import SubscriptionData
from ..impl.errors import CodecError
from ..impl.jsonl import Handler
from ..impl.jsonl_served import Decoder, Encoder, ServedAssignor, served_ops
from ..impl.jsonl_shapes import AssignOpAnswer, AssignOpRequest
from ..impl.types import Subscription
from .adapters.codecs import BuiltinCodec, CodecFailure, CodecTarget
from .target import BUILTIN_ASSIGNORS, Target, TargetError

__all__ = ["served_assignors", "target_ops"]


class CodecRejected(CodecError):
    """Bytes a target's codec rejects as malformed (``CodecFailure``), in its own words."""

    def __init__(self, text: str) -> None:
        ValueError.__init__(self, text)
        self.reason, self.kafka_class = text, "SchemaException"
        self.offset, self.field, self.version = -1, "", None


def _writer(codec: CodecTarget) -> Encoder:
    """The codec's ``encode_subscription`` in impl's terms."""
    def encode(subscription: Subscription, version: int) -> bytes:
        generation = subscription.generation_id
        return codec.encode_subscription({
            "topics": list(subscription.topics), "userData": subscription.user_data,
            "owned": list(subscription.owned_partitions),
            "generation": -1 if generation is None else generation,
            "rack": subscription.rack_id}, version)
    return encode


def _reader(codec: CodecTarget) -> Decoder:
    """The codec's ``decode_subscription`` in impl's terms."""
    def decode(data: bytes) -> SubscriptionData:
        try:
            message = codec.decode_subscription(data)
        except CodecFailure as exc:
            raise CodecRejected(str(exc)) from None
        return SubscriptionData(
            message.get("version", -1), list(message.get("topics", [])),
            message.get("userData"),
            [(t, list(ps)) for t, ps in message.get("ownedPartitions", [])],
            message.get("generationId", -1), message.get("rackId"),
            message.get("remaining") or 0)
    return decode


def _own(codec: object, method: str) -> bool:
    """``codec`` has a ``method`` of its own, not groupcheck's (``BuiltinCodec``'s)."""
    return getattr(type(codec), method, None) is not getattr(BuiltinCodec, method)


def _builtin(name: str) -> ServedAssignor:
    def assign(request: AssignOpRequest) -> AssignOpAnswer:
        return assign_with(lambda: make_assignor(name), request)
    return ServedAssignor(assign, lambda: make_assignor(name))


def served_assignors(target: Target) -> dict[str, ServedAssignor]:
    """The assignors a server of ``target`` runs, by name (see the module doc)."""
    if target.choices is not None and target.pick is not None:
        picked = [target.pick(name) for name in target.choices()]
        target.closers.extend(t.close for t in picked)
    else:
        picked = [target]
    out: dict[str, ServedAssignor] = {}
    for one in picked:
        if one.assignor is not None and one.assign is not None and one.make is not None:
            out[one.assignor] = ServedAssignor(one.assign, one.make)
    if not out and target.assignor is None and target.codec is not None:
        out = {name: _builtin(name) for name in BUILTIN_ASSIGNORS}
    return out


def target_ops(target: Target) -> dict[str, Handler]:
    """The ops a server of ``target`` answers (`TargetError` when it has nothing the
    contract serves)."""
    assignors = served_assignors(target)
    if not assignors:
        raise TargetError(f"{target.name} has no assign function and no codec to serve "
                          "(the JSON-lines contract serves assignors and codecs)")
    codec = target.codec
    if codec is None:
        return served_ops(assignors)
    return served_ops(assignors,
                      _writer(codec) if _own(codec, "encode_subscription") else None,
                      _reader(codec) if _own(codec, "decode_subscription") else None)
