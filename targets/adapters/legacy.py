"""Older clients that still share groups with current ones: what a member speaks when its
`MemberSpec` asks for an old codec version.

* `PreKip341StickyAssignor` — a sticky client from before KIP-341 (user data v0): it writes
  no generation and, as leader, trusts every previous-partition claim (KAFKA-7026); only the
  general algorithm existed before KAFKA-9987.
* `NoUserDataCooperativeStickyAssignor` — a cooperative-sticky client that sends no user
  data, so with a subscription older than v2 no generation travels with its owned
  partitions (KIP-792 added the field for exactly this; kafka-python behaves so).
"""

from __future__ import annotations

from ...impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from ...impl.assignors.sticky_common import OwnedClaims
from ...impl.types import Subscription, TopicPartition
from ...impl.user_data import MemberData, encode_sticky_user_data

__all__ = ["NoUserDataCooperativeStickyAssignor", "PreKip341StickyAssignor"]


class PreKip341StickyAssignor(StickyAssignor):
    """KAFKA-7026: the sticky assignor before KIP-341. Its user data carries no generation
    (v0), the leader trusts every member's previous partitions, and only the general
    algorithm exists, so a member that comes back with a stale assignment keeps partitions
    that someone else was given since."""

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, None)

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        owned: dict[str, list[TopicPartition]] = {
            m: [tp for tp in member_data[m].partitions
                if 0 <= tp[1] < partitions_per_topic.get(tp[0], 0)] for m in members}
        # before KAFKA-9987 (2020) there was only the general algorithm
        return OwnedClaims(False, owned)


class NoUserDataCooperativeStickyAssignor(CooperativeStickyAssignor):
    """Cooperative-sticky without user data: the generation reaches the leader only in a
    subscription of version 2 or later (KIP-792)."""

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None
