"""I10 in the audit: a scenario's first request written and read back through a target's
subscription codec (``properties.codec`` judges each round trip).

Every member of the request is encoded at the spec's writer version, its header rewritten to
the reader version, and decoded; the check stops at the first violation. A release of Kafka's
client (``targets.adapters.codecs.ReleaseCodec``) is held to its profile: what its member
holds, its highest reader layout, and an older writer's order left out. A scenario's
targets usually share one codec object and the same first request (the four builtins do),
so the last check's inputs and findings are kept: an identical check is answered from them,
any other codec or request runs its own round trips.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from ..model.story_shapes import CodecSpec
from ..properties.codec import Message, SubscriptionInput, codec_violations
from ..properties.jsonl_shapes import AssignRequest, pair_of
from .targets import AuditTarget

__all__ = ["check_codec"]


def check_codec(target: AuditTarget, request: AssignRequest, codec: CodecSpec) -> list[str]:
    """I10 over every member of ``request``: written at ``codec['writer']``, read with the
    header rewritten to ``codec['reader']``."""
    if target.codec is None:
        return []
    w, r = int(codec["writer"]), int(codec["reader"])
    user_data = codec.get("userData")
    members = [(list(v["topics"]), [pair_of(c) for c in v["owned"]], v["generation"],
                v.get("rack")) for v in request["members"].values()]
    key = (target.codec, w, r, user_data, members)
    if _last_codec_check[0] == key:
        return list(_last_codec_check[1])
    out = _codec_round_trips(target.codec, w, r, user_data, members)
    _last_codec_check[:] = [key, list(out)]
    return out


#: the last I10 check's inputs (codec object, versions, user data, members) and findings:
#: a scenario's targets usually share one codec and the same first request, so the round
#: trips run once for all of them
_last_codec_check: list[Any] = [None, []]


def _codec_round_trips(codec: Any, w: int, r: int, user_data: str | None,
                       members: list[tuple[list[str], list[tuple[str, int]], Any, Any]]
                       ) -> list[str]:
    """I10's round trips, member by member, up to the first violation."""
    out: list[str] = []
    for topics, owned, gen, rack in members:
        x: SubscriptionInput = {"topics": list(topics),
                                "userData": None if user_data is None
                                else base64.b64decode(user_data),
                                "owned": list(owned), "generation": -1 if gen is None else gen,
                                "rack": rack}
        data = codec.encode_subscription(x, w)
        data = struct.pack(">h", r) + data[2:]
        try:
            decoded: Message | None = codec.decode_subscription(data)
        except codec.error:
            decoded = None
        # a release's codec (targets.adapters.codecs.ReleaseCodec) is held to what it has
        release = hasattr(codec, "reader_highest")
        out += codec_violations(codec.as_sent(x, w) if release else x, w, r, decoded,
                                reader_highest=codec.reader_highest if release else None,
                                ordered=codec.ordered(w) if release else True)
        if out:
            break
    return out
