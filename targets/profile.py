"""What one client release can do: the answer of a driver's ``profile`` op as a value.

A release is not a broken copy of the newest client but one with fewer features, so a check
asks its target's profile before holding it to a rule: whether a member's generation travels
at all, in the Subscription (KIP-792) or in the cooperative-sticky user data (KAFKA-12984);
whether a member sends its rack (KIP-881); which subscription and assignment versions it
writes and reads; whether its listener has ``onPartitionsLost`` (KIP-429) and its config
``group.instance.id`` (KIP-345); which assignors it ships and their protocols. The Java
driver learns these from the client at start-up (``java_driver_src/Profile.java``), never
from a table of release numbers; `ReleaseProfile.from_answer` reads that answer, `summary` is
the one line a check prints in its header, and `absent` names a feature the release lacks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..properties.codec import SubscriptionInput
from ..properties.jsonl_shapes import ProfileJson

__all__ = ["FEATURES", "GENERATION_PLACES", "ProfileError", "ReleaseProfile", "Versions"]

#: where a member's generation travels (the ``generation_in`` field)
GENERATION_PLACES = ("none", "user_data", "subscription")
#: the feature names `ReleaseProfile.absent` knows, besides ``subscription_v<N>``,
#: ``assignment_v<N>``, ``assignor:<name>`` and ``rack_aware:<name>``
FEATURES = ("generation", "rack", "on_partitions_lost", "static_membership")
_VERSIONED = re.compile(r"(subscription|assignment)_v(\d+)\Z")


class ProfileError(ValueError):
    """A profile answer of the wrong shape."""


@dataclass(frozen=True)
class Versions:
    """The versions of one consumer-protocol message: ``writes``, the one the client
    writes by default (its highest), and ``reads``, every one it writes and reads back."""

    writes: int
    reads: tuple[int, ...]

    def span(self) -> str:
        """``v0-v3`` (``v1`` for a single version, ``none`` for no version)."""
        if not self.reads:
            return "none"
        low, high = min(self.reads), max(self.reads)
        return f"v{low}" if low == high else f"v{low}-v{high}"


def _field(answer: Mapping[str, Any], key: str, kind: type | tuple[type, ...],
           default: Any = ...) -> Any:
    if key not in answer or answer[key] is None:
        if default is ...:
            raise ProfileError(f"profile: {key!r} is missing")
        return default
    value = answer[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProfileError(f"profile: {key!r} has the wrong type ({value!r})")
    return value


def _names(answer: Mapping[str, Any], key: str, default: Any = ...) -> Any:
    value = _field(answer, key, list, default)
    if value is None or value is default:
        return value
    if not all(isinstance(v, str) for v in value):
        raise ProfileError(f"profile: {key!r} must be a list of names")
    return tuple(value)


def _versions(answer: Mapping[str, Any], key: str) -> Versions:
    raw = _field(answer, key, dict)
    writes = _field(raw, "writes", int)
    reads = _field(raw, "reads", list)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in reads):
        raise ProfileError(f"profile: {key!r} reads must be a list of versions")
    return Versions(writes, tuple(sorted(reads)))


def _assignors(answer: Mapping[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    raw = _field(answer, "assignors", dict)
    out = []
    for name, protocols in raw.items():
        if not isinstance(protocols, list) or not all(isinstance(p, str) for p in protocols):
            raise ProfileError(f"profile: assignor {name!r} protocols must be a list of names")
        out.append((str(name), tuple(protocols)))
    return tuple(out)


@dataclass(frozen=True)
class ReleaseProfile:
    """One client release's features, as its driver's ``profile`` op answered them (the
    fields mirror the op; ``client`` names the driver, e.g. ``"java"``)."""

    client: str
    version: str
    subscription_versions: Versions
    assignment_versions: Versions
    #: ``"subscription"`` (KIP-792), ``"user_data"`` (cooperative-sticky's user data) or
    #: ``"none"``: where a cooperative-sticky member's generation reaches the leader
    generation_in: str
    #: cooperative-sticky's user data carries the generation (also when the Subscription
    #: does)
    user_data_generation: bool
    #: every assignor whose own user data carries the generation
    user_data_generation_assignors: tuple[str, ...]
    #: the Subscription carries the member's rack (KIP-881)
    rack: bool
    #: the assignors seen matching consumer racks to replica racks (None: not reported)
    rack_aware_assignors: tuple[str, ...] | None
    #: ConsumerRebalanceListener declares onPartitionsLost (KIP-429)
    on_partitions_lost: bool
    #: ConsumerConfig has group.instance.id (KIP-345)
    static_membership: bool
    #: a paused partition a new assignment keeps stays paused in the client's bookkeeping
    #: (None: the driver could not learn it)
    pause: bool | None
    #: (name, supported protocols) of each classic assignor the client ships
    assignors: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def from_answer(cls, client: str, answer: Mapping[str, Any]) -> ReleaseProfile:
        """Read a ``profile`` answer; `ProfileError` when it has the wrong shape."""
        generation_in = _field(answer, "generation_in", str)
        if generation_in not in GENERATION_PLACES:
            raise ProfileError(f"profile: generation_in {generation_in!r} is not one of "
                               f"{', '.join(GENERATION_PLACES)}")
        pause = _field(answer, "pause", bool, None)
        return cls(
            client=client,
            version=_field(answer, "version", str),
            subscription_versions=_versions(answer, "subscription_versions"),
            assignment_versions=_versions(answer, "assignment_versions"),
            generation_in=generation_in,
            user_data_generation=_field(answer, "user_data_generation", bool,
                                        generation_in == "user_data"),
            user_data_generation_assignors=_names(answer, "user_data_generation_assignors", ()),
            rack=_field(answer, "rack", bool),
            rack_aware_assignors=_names(answer, "rack_aware_assignors", None),
            on_partitions_lost=_field(answer, "on_partitions_lost", bool),
            static_membership=_field(answer, "static_membership", bool),
            pause=pause,
            assignors=_assignors(answer),
        )

    def to_json(self) -> ProfileJson:
        """The op's answer again (plus ``client``), JSON-ready; `from_answer` reads it
        back to an equal profile."""
        return {
            "client": self.client,
            "version": self.version,
            "subscription_versions": {"writes": self.subscription_versions.writes,
                                      "reads": list(self.subscription_versions.reads)},
            "assignment_versions": {"writes": self.assignment_versions.writes,
                                    "reads": list(self.assignment_versions.reads)},
            "generation_in": self.generation_in,
            "user_data_generation": self.user_data_generation,
            "user_data_generation_assignors": list(self.user_data_generation_assignors),
            "rack": self.rack,
            "rack_aware_assignors": None if self.rack_aware_assignors is None
            else list(self.rack_aware_assignors),
            "on_partitions_lost": self.on_partitions_lost,
            "static_membership": self.static_membership,
            "pause": self.pause,
            "assignors": {name: list(protocols) for name, protocols in self.assignors},
        }

    def protocols(self, assignor: str) -> tuple[str, ...] | None:
        """The protocols ``assignor`` supports (None: the client does not ship it)."""
        return dict(self.assignors).get(assignor)

    def summary(self) -> str:
        """One line for a check's header, e.g. ``java 3.0.0: subscription v0-v1,
        generation in user data, no rack (KIP-881), onPartitionsLost, static membership``."""
        generation = {"subscription": "generation in subscription (KIP-792)",
                      "user_data": "generation in user data",
                      "none": "no generation (KIP-792)"}[self.generation_in]
        parts = [f"subscription {self.subscription_versions.span()}", generation,
                 "rack (KIP-881)" if self.rack else "no rack (KIP-881)",
                 "onPartitionsLost" if self.on_partitions_lost
                 else "no onPartitionsLost (KIP-429)",
                 "static membership" if self.static_membership
                 else "no static membership (KIP-345)"]
        return f"{self.client} {self.version}: {', '.join(parts)}"

    def has(self, feature: str) -> bool:
        """Whether the release has ``feature`` (see `absent`); `ValueError` for a name
        this module does not know."""
        simple = {"generation": self.generation_in != "none", "rack": self.rack,
                  "on_partitions_lost": self.on_partitions_lost,
                  "static_membership": self.static_membership}
        if feature in simple:
            return simple[feature]
        versioned = _VERSIONED.match(feature)
        if versioned:
            versions = self.subscription_versions if versioned.group(1) == "subscription" \
                else self.assignment_versions
            return int(versioned.group(2)) in versions.reads
        kind, _, name = feature.partition(":")
        if kind == "assignor" and name:
            return self.protocols(name) is not None
        if kind == "rack_aware" and name:
            return name in (self.rack_aware_assignors or ())
        raise ValueError(f"unknown feature {feature!r}; expected one of {', '.join(FEATURES)}, "
                         "subscription_v<N>, assignment_v<N>, assignor:<name>, "
                         "rack_aware:<name>")

    def as_sent(self, x: SubscriptionInput) -> SubscriptionInput:
        """A subscription input ``x`` (``rack``, ``generation``) as a member of this release
        holds it: no rack before KIP-881, no generation in its Subscription before
        KIP-792."""
        return {**x, "rack": x.get("rack") if self.rack else None,
                "generation": x.get("generation", -1)
                if self.generation_in == "subscription" else -1}

    def absent(self, feature: str) -> str | None:
        """``"absent in 2.8.0"`` when the release lacks ``feature``, else None."""
        return None if self.has(feature) else f"absent in {self.version}"

