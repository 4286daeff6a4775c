"""The ops of a JSON-lines server that runs the assignors and the codec it is handed instead
of groupcheck's own: what ``groupcheck jsonl --target T`` serves, so that anything with an
assign function (a zoo mutant, a user's Python assignor) answers as a process does, a
``jsonl:`` target of its own.

``assignors`` answers the names of the assignors the server runs; ``assign`` and
``user_data`` go to the assignor the request names, and a name the server does not run is
an error answer, as from a process that implements only its own assignors. A
subscription writer and reader, where given, answer ``encode_subscription`` and
``decode_subscription``; every other op is groupcheck's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .consumer_protocol import SubscriptionData
from .errors import InvalidRequestError
from .jsonl import (
    OPS,
    Handler,
    assignor_name,
    decode_op,
    encode_subscription_op,
    subscription_views,
    user_data_with,
)
from .jsonl_shapes import AssignOpAnswer, AssignOpRequest, CodecRequest, UserDataAnswer
from .types import Assignor, Subscription

__all__ = ["Decoder", "Encoder", "ServedAssignor", "served_ops"]


@dataclass(frozen=True)
class ServedAssignor:
    """One assignor a server runs: ``assign`` answers the ``assign`` op (client or raw mode,
    as its consumers build their subscriptions), ``make`` gives a fresh consumer's instance
    (the ``user_data`` op)."""

    assign: Callable[[AssignOpRequest], AssignOpAnswer]
    make: Callable[[], Assignor]


#: bytes from a subscription at a version
Encoder = Callable[[Subscription, int], bytes]
#: the message read back from bytes (``CodecError`` on malformed bytes)
Decoder = Callable[[bytes], SubscriptionData]


def served_ops(assignors: Mapping[str, ServedAssignor], encoder: Encoder | None = None,
               decoder: Decoder | None = None) -> dict[str, Handler]:
    """groupcheck's ops with ``assign`` and ``user_data`` answered by ``assignors`` (by
    name) and, where given, the subscription's writer and reader."""
    def served(name: str) -> ServedAssignor:
        found = assignors.get(name)
        if found is None:
            raise InvalidRequestError(f"unknown assignor {name!r}; expected one of "
                                      f"{', '.join(assignors) or 'none'}")
        return found

    def assign(req: AssignOpRequest) -> AssignOpAnswer:
        return served(assignor_name(req, "assign")).assign(req)

    def user_data(req: CodecRequest) -> UserDataAnswer:
        return user_data_with(served(assignor_name(req, "user_data")).make(), req)

    ops: dict[str, Handler] = {**OPS, "assign": assign, "user_data": user_data,
                               "assignors": lambda req: {"assignors": list(assignors)}}
    if encoder is not None:
        ops["encode_subscription"] = encode_subscription_op(encoder)
    if decoder is not None:
        ops["decode_subscription"] = decode_op(decoder, subscription_views)
    return ops
