"""The JSON-lines service: one JSON request per line in, one JSON answer per line out.

Ops: ``ping``, ``assignors`` (the names of the assignors served), ``encode_subscription``,
``decode_subscription``, ``encode_assignment``, ``decode_assignment``, ``user_data`` and
``assign``. Wire bytes travel as lowercase hex,
user data as base64, a partition as ``[topic, p]``. Any bad request is answered with
``{"error": "<Class>: <message>"}`` and the service goes on. A request's ``"id"`` (a string
or an integer) is echoed in its answer, so a caller may keep many requests in flight; the
service answers in order all the same. `serve` answers small ``assign`` requests through an
`AssignSession`, which computes what repeats across them once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any, TypeVar

from .assign_op import (
    b64,
    claims,
    optional_generation,
    optional_name,
    partition_list,
    run_assign,
    topic_names,
    unb64,
)
from .assign_session import AssignSession
from .assignors import ASSIGNOR_NAMES, make_assignor
from .consumer_protocol import (
    AssignmentData,
    SubscriptionData,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from .errors import AssignorError, CodecError, InvalidRequestError
from .jsonl_shapes import (
    Answer,
    AssignmentView,
    AssignOpRequest,
    CodecRequest,
    ErrorAnswer,
    HexAnswer,
    SubscriptionView,
    UserDataAnswer,
)
from .types import Assignment, Assignor, Subscription

__all__ = ["OPS", "SESSION_LIMIT", "SESSION_PARTITIONS", "Handler", "assignor_name",
           "decode_op", "encode_subscription_op", "error_text", "handle", "handle_line",
           "request_id", "serve", "session_ops", "subscription_views", "user_data_with"]

T = TypeVar("T")
V = TypeVar("V")

#: an op's handler; it gets the request line's object as parsed and checks what it reads
Handler = Callable[[Any], Answer]


def _hex_input(request: CodecRequest) -> bytes:
    text = request.get("hex")
    if not isinstance(text, str):
        raise InvalidRequestError("'hex' must be a string of hex digits")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise InvalidRequestError("'hex' is not valid hex") from None


def _version(request: CodecRequest) -> int:
    v = request.get("version", 3)
    if not isinstance(v, int) or isinstance(v, bool):
        raise InvalidRequestError("'version' must be an integer")
    return v


def encode_subscription_op(encoder: Callable[[Subscription, int], bytes]
                           ) -> Callable[[CodecRequest], HexAnswer]:
    """The ``encode_subscription`` op over ``encoder`` (groupcheck's codec, or one handed to
    a server)."""
    def op(req: CodecRequest) -> HexAnswer:
        generation = optional_generation(req.get("generation"))
        sub = Subscription(
            topics=topic_names(req.get("topics")),
            user_data=unb64(req.get("userData"), "userData"),
            owned_partitions=partition_list(req.get("owned"), "owned"),
            generation_id=-1 if generation is None else generation,
            rack_id=optional_name(req.get("rack"), "rack"),
        )
        return {"hex": encoder(sub, _version(req)).hex()}
    return op


def _op_encode_assignment(req: CodecRequest) -> HexAnswer:
    assignment = Assignment(partition_list(req.get("partitions"), "partitions"),
                            unb64(req.get("userData"), "userData"))
    return {"hex": encode_assignment(assignment, _version(req)).hex()}


def subscription_views(data: SubscriptionData) -> SubscriptionView:
    """The leader's view at top level and the raw message under ``data``."""
    api = data.to_api()
    return {
        "version": data.version,
        "topics": api.topics,
        "userData": b64(api.user_data),
        "owned": claims(api.owned_partitions),
        "generation": api.generation_id,
        "rack": api.rack_id,
        "remaining": data.remaining,
        "data": {
            "topics": data.topics,
            "userData": b64(data.user_data),
            "ownedPartitions": [{"topic": t, "partitions": ps} for t, ps in data.owned_partitions],
            "generationId": data.generation_id,
            "rackId": data.rack_id,
        },
    }


def _assignment_views(data: AssignmentData) -> AssignmentView:
    return {
        "version": data.version,
        "partitions": claims(data.to_api().partitions),
        "userData": b64(data.user_data),
        "remaining": data.remaining,
        "data": {
            "assignedPartitions": [{"topic": t, "partitions": ps}
                                   for t, ps in data.assigned_partitions],
            "userData": b64(data.user_data),
        },
    }


def decode_op(decoder: Callable[[bytes], T], views: Callable[[T], V]
               ) -> Callable[[CodecRequest], V | ErrorAnswer]:
    def op(req: CodecRequest) -> V | ErrorAnswer:
        try:
            return views(decoder(_hex_input(req)))
        except CodecError as exc:
            text = error_text(exc)
            return {"error": text, "dataError": text}
    return op


def assignor_name(req: CodecRequest | AssignOpRequest, op: str) -> str:
    """The request's ``assignor`` (an error answer when it names none)."""
    name = req.get("assignor")
    if not isinstance(name, str):
        raise InvalidRequestError(f"{op} needs an 'assignor' name")
    return name


def _op_user_data(req: CodecRequest) -> UserDataAnswer:
    return user_data_with(make_assignor(assignor_name(req, "user_data")), req)


def user_data_with(assignor: Assignor, req: CodecRequest) -> UserDataAnswer:
    """The ``user_data`` op on ``assignor``, a fresh consumer's instance."""
    generation = optional_generation(req.get("generation"))
    if generation is not None:
        assignor.on_assignment(Assignment(partition_list(req.get("owned"), "owned")),
                               generation)
    topics = set(topic_names(req.get("topics")))
    return {"userData": b64(assignor.subscription_user_data(topics))}


OPS: dict[str, Handler] = {
    "ping": lambda req: {"pong": True},
    "assignors": lambda req: {"assignors": list(ASSIGNOR_NAMES)},
    "encode_subscription": encode_subscription_op(encode_subscription),
    "decode_subscription": decode_op(decode_subscription, subscription_views),
    "encode_assignment": _op_encode_assignment,
    "decode_assignment": decode_op(decode_assignment, _assignment_views),
    "user_data": _op_user_data,
    "assign": run_assign,
}


def error_text(exc: BaseException) -> str:
    """``"<Class>: <message>"``, naming Kafka's exception where we mirror one."""
    kafka_class = getattr(exc, "kafka_class", None)
    name = type(exc).__name__
    label = f"{name} ({kafka_class})" if kafka_class else name
    return f"{label}: {exc}"


#: the most partitions (in all) of an ``assign`` request that `session_ops` answers through
#: its session, which keeps answers for reuse; a bigger one runs afresh and is not kept
SESSION_PARTITIONS = 64
#: entries each of the session's caches keeps before it is cleared (memory stays bounded)
SESSION_LIMIT = 10_000


def session_ops() -> dict[str, Handler]:
    """`OPS` with ``assign`` answered through one `AssignSession` (equal answers, what
    repeats computed once) for requests of at most `SESSION_PARTITIONS` partitions."""
    session = AssignSession(limit=SESSION_LIMIT)

    def assign(request: Any) -> Answer:
        partitions = request.get("partitions")
        counts = partitions.values() if isinstance(partitions, dict) else ()
        if (counts and all(type(c) is int for c in counts)
                and sum(counts) <= SESSION_PARTITIONS):
            return session(request)
        return run_assign(request)

    return {**OPS, "assign": assign}


def handle(request: Any, ops: dict[str, Handler] = OPS) -> Answer:
    """Answer one decoded request with ``ops``; never raises."""
    try:
        if not isinstance(request, dict):
            raise InvalidRequestError("a request must be a JSON object")
        op = request.get("op")
        handler = ops.get(op) if isinstance(op, str) else None
        if handler is None:
            raise InvalidRequestError(f"unknown op {op!r}; expected one of {', '.join(OPS)}")
        return handler(request)
    except (CodecError, AssignorError, InvalidRequestError) as exc:
        return {"error": error_text(exc)}
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        return {"error": f"InvalidRequestError: {type(exc).__name__}: {exc}"}
    except Exception as exc:  # the service outlives any one request
        return {"error": f"InternalError: {type(exc).__name__}: {exc}"}


def request_id(request: Any) -> str | int | None:
    """A request's ``"id"`` (None when it has none); raises `InvalidRequestError` for an id
    that is neither a string nor an integer."""
    if not isinstance(request, dict) or "id" not in request:
        return None
    ident = request["id"]
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return ident
    raise InvalidRequestError(f"'id' must be a string or an integer, not {ident!r}")


def handle_line(line: str, ops: dict[str, Handler] = OPS) -> str:
    """One line in, one line out: the answer carries the request's ``"id"``, if it has
    one."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        return json.dumps({"error": f"InvalidRequestError: line is not JSON: {exc}"})
    except RecursionError:  # a line nested deeper than the decoder's stack
        return json.dumps({"error": "InvalidRequestError: line is not JSON: nested too deeply"})
    try:
        ident = request_id(request)
    except InvalidRequestError as exc:
        return json.dumps({"error": error_text(exc)})
    answer: dict[str, object] = dict(handle(request, ops))
    if ident is not None:
        answer["id"] = ident
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def serve(stdin: IO[str], stdout: IO[str], ops: dict[str, Handler] | None = None) -> int:
    """Answer every non-blank line of ``stdin`` in order, each flushed at once (a caller
    may have sent more); returns 0 at end of input. ``ops``: another server's
    (`jsonl_served.served_ops`) instead of groupcheck's (`session_ops`)."""
    ops = session_ops() if ops is None else ops
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(handle_line(line, ops) + "\n")
        stdout.flush()
    return 0
