"""Many ``assign`` requests of the JSON-lines contract answered in one process, for callers
that send thousands of small, similar ones (the scope prover): what repeats across them is
computed once (`AssignSession`). Each answer equals `assign_op.assign_with`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from .assign_op import (
    client_subscription,
    leader_response,
    member_subscriptions,
    new_generation,
    request_cluster,
    run_leader,
    seen_by_leader,
)
from .assignors import make_assignor
from .consumer_protocol import HIGHEST_VERSION
from .errors import InvalidRequestError
from .jsonl_shapes import AssignOpAnswer, AssignOpMember, AssignOpRequest
from .types import Assignor, Cluster, Subscription, TopicPartition

__all__ = ["AssignSession", "SessionAnswer"]


class AssignSession:
    """Many ``assign`` requests answered as :func:`assign_with` answers each, for callers
    that send thousands of small, similar ones (the scope prover).

    What repeats is computed once. A member's client-mode subscription is a function of its
    fields, the subscription version and the assignor (a fresh instance per member), so it
    is kept by those fields. The leader's answer is a function of what the leader is handed
    — the metadata, the racks and the subscriptions in order — because the leader is a
    fresh instance of a deterministic assignor: equal leader inputs share one answer. (Only
    for assignors known to be deterministic: the builtins and the bug zoo's mutants.) An
    assignor that offers ``resolved_input`` (sticky: its claims after conflict resolution,
    KIP-341) shares one answer between inputs it resolves alike, stale and losing claims
    apart. The caches are cleared when they reach ``limit`` entries; `assign_keyed` keeps
    answers by numbered leader views, and clears everything that holds those numbers at once.
    ``user_data=False`` leaves out ``userData`` and ``assignmentUserData``, which only a
    member's next join reads.
    """

    def __init__(self, make: Callable[[str], Assignor] | None = None, *,
                 subscription_version: int | None = None, user_data: bool = True,
                 limit: int = 50_000) -> None:
        self.make = make
        self.subscription_version = subscription_version
        self.user_data = user_data
        self.limit = limit
        self.subscriptions: dict[Any, dict[Any, Subscription]] = {}
        self.keyed: dict[Any, dict[Hashable, tuple[Subscription, int]]] = {}
        #: each distinct leader view a key named, numbered (keyed answers are kept by them)
        self.view_ids: dict[Any, int] = {}
        self.answers: dict[Any, Any] = {}
        #: answers by the leader's resolved input, for assignors that offer it
        self.resolved: dict[Any, Any] = {}
        self._keyers: dict[Any, Assignor] = {}
        self._clusters: dict[Hashable, Cluster] = {}
        self.leader_runs = 0
        self._makers: dict[Any, tuple[str, Callable[[], Assignor], int]] = {}

    def _maker(self, request: AssignOpRequest) -> tuple[str, Callable[[], Assignor], int]:
        return self._maker_of(request.get("assignor"), request.get("subscriptionVersion"))

    def _maker_of(self, name: object, asked: object) -> tuple[str, Callable[[], Assignor], int]:
        """(label, factory, subscription version) for an assignor name and the version a
        request asks for (kept for well-formed ones)."""
        if not isinstance(name, str) or not (asked is None or type(asked) is int):
            return self._new_maker(name, asked)
        found = self._makers.get((name, asked))
        if found is None:
            found = self._new_maker(name, asked)
            if len(self._makers) < 64:
                self._makers[(name, asked)] = found
        return found

    def _new_maker(self, name: object, asked: object) -> tuple[str, Callable[[], Assignor], int]:
        if self.make is None and not isinstance(name, str):
            raise InvalidRequestError("assign needs an 'assignor' name")
        chosen = self.make
        label = str(name)

        def make() -> Assignor:
            return chosen(label) if chosen is not None else make_assignor(label)

        version = self.subscription_version if self.subscription_version is not None \
            else _version(asked)
        return label, make, version

    def _led(self, key: Any, make: Callable[[], Assignor], request: AssignOpRequest,
             subscriptions: dict[str, Subscription], metadata: Hashable) -> Any:
        found = self.answers.get(key)
        if found is None:
            if len(self.answers) >= self.limit:
                self.answers.clear()
            found = self.answers[key] = self._resolved_led(key[:2], make, request,
                                                           subscriptions, metadata)
        return found

    def _resolved_led(self, maker: Any, make: Callable[[], Assignor], request: AssignOpRequest,
                      subscriptions: dict[str, Subscription], metadata: Hashable) -> Any:
        """A leader run, shared by every input the assignor resolves alike
        (``resolved_input``: sticky's claims after conflict resolution)."""
        keyer = self._keyers.get(maker)
        if keyer is None:
            keyer = self._keyers[maker] = make()
        resolve = getattr(keyer, "resolved_input", None)
        try:
            resolved = None if resolve is None else resolve(self._cluster(request, metadata),
                                                            subscriptions)
        except Exception:  # noqa: BLE001 - the leader run below raises what is wrong
            resolved = None
        if resolved is None:
            self.leader_runs += 1
            return run_leader(make, request, subscriptions)
        key = (maker, metadata, resolved)
        found = self.resolved.get(key)
        if found is None:
            if len(self.resolved) >= self.limit:
                self.resolved.clear()
            self.leader_runs += 1
            found = self.resolved[key] = run_leader(make, request, subscriptions)
        return found

    def _cluster(self, request: AssignOpRequest, metadata: Hashable) -> Cluster:
        """The request's metadata as the leader reads it, kept by its key (read it only)."""
        cluster = self._clusters.get(metadata)
        if cluster is None:
            if len(self._clusters) >= self.limit:
                self._clusters.clear()
            cluster = self._clusters[metadata] = request_cluster(request)
        return cluster

    def leader_view(self, assignor: str, member: AssignOpMember) -> Hashable:
        """What the leader reads of one member's client-mode subscription (a request's
        member entry) with this assignor: equal views, equal leader inputs."""
        _, make, version = self._maker_of(assignor, None)
        view: Hashable = seen_by_leader(client_subscription(make(), member, version))
        return view

    def assign_keyed(self, request: AssignOpRequest, keys: Sequence[Hashable],
                     metadata_key: Hashable) -> SessionAnswer:
        """``__call__`` for a caller that names what repeats: ``keys[i]`` stands for the
        i-th member's fields (equal keys, equal fields) and ``metadata_key`` for the
        partitions and racks. Nothing is built from the request that a key already names,
        and the answer's response dict is made only when asked for (client mode only)."""
        if request.get("mode", "client") != "client":
            raise InvalidRequestError("assign_keyed answers client-mode requests only")
        label, make, version = self._maker(request)
        if len(self.view_ids) >= self.limit:
            # a number stands for one view only while every cache that holds it lives
            self.view_ids.clear()
            self.keyed.clear()
            self.answers.clear()
        cache = self.keyed.setdefault((label, version), {})
        if len(cache) >= self.limit:
            cache.clear()
        members = request["members"]
        subscriptions: dict[str, Subscription] = {}
        seen: list[Any] = []
        for (member_id, member), key in zip(members.items(), keys, strict=True):
            hit = cache.get(key)
            if hit is None:
                built = client_subscription(make(), member, version)
                view = seen_by_leader(built)
                number = self.view_ids.setdefault(view, len(self.view_ids))
                hit = cache[key] = (built, number)
            subscriptions[member_id] = hit[0]
            seen.append(member_id)
            seen.append(hit[1])
        led = self._led((label, version, metadata_key, tuple(seen)), make, request,
                        subscriptions, metadata_key)
        return SessionAnswer(self, make, request, led)

    def __call__(self, request: AssignOpRequest) -> AssignOpAnswer:
        label, make, version = self._maker(request)
        cache = self.subscriptions.setdefault((label, version), {})
        if len(cache) >= self.limit:
            cache.clear()
        subscriptions = member_subscriptions(make, request, version, cache, [])
        metadata = (tuple(sorted((request.get("partitions") or {}).items())),
                    repr(request.get("racks")))
        key = (label, version, metadata,
               tuple((m, seen_by_leader(s)) for m, s in subscriptions.items()))
        led = self._led(key, make, request, subscriptions, metadata)
        return leader_response(make, request, led, self.user_data)


def _version(asked: object) -> int:
    """The subscription version a request asks for (null or absent: the highest)."""
    if asked is None:
        return HIGHEST_VERSION
    if not isinstance(asked, int):
        raise InvalidRequestError(f"subscriptionVersion must be an integer, not {asked!r}")
    return asked


class SessionAnswer:
    """One answer of `AssignSession.assign_keyed`: the assignment as the leader made it
    (shared with every request of the same leader input: read it, never change it), the
    protocol and the next generation; ``response()`` is the dict ``__call__`` returns."""

    __slots__ = ("_make", "_request", "_session", "assignment", "generation", "led",
                 "protocol")

    def __init__(self, session: AssignSession, make: Callable[[], Assignor],
                 request: AssignOpRequest, led: Any) -> None:
        self._session, self._make, self._request, self.led = session, make, request, led
        self.assignment: dict[str, list[TopicPartition]] = dict(led[0])
        self.protocol: str = led[2]
        self.generation = new_generation(request, request["members"])

    def response(self) -> AssignOpAnswer:
        return leader_response(self._make, self._request, self.led, self._session.user_data)
