"""Hypothesis properties of the sticky assignors over random groups.

Groups: 1-4 topics of 1-8 partitions, 1-6 members (some ids colliding in Java's hash), equal
or unequal subscriptions (some members may subscribe to nothing), optional racks, optional
static members, and a previous assignment that members report at the current generation, plus
stale claims at older generations.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groupcheck.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from groupcheck.impl.types import Cluster, Subscription, TopicPartition
from groupcheck.impl.user_data import encode_cooperative_user_data, encode_sticky_user_data

IDS = ["Aa", "BB", "c", "consumer-1", "m2", "AaAa", "BBBB", "z"]
Assignment = dict[str, list[TopicPartition]]


@dataclass
class Group:
    cluster: Cluster
    topics: dict[str, list[str]]
    racks: dict[str, str | None]
    instance_ids: dict[str, str | None]
    owned: Assignment  # claims at ``generation``
    stale: Assignment  # claims at ``generation - 1``
    generation: int


@st.composite
def groups(draw: st.DrawFn, stale: bool = True, racks: bool = True,
           empty: bool = True) -> Group:
    """A random group; with ``empty``, members of unequal subscriptions may subscribe to
    nothing (about one in six)."""
    names = [f"t{i}" for i in range(draw(st.integers(1, 4)))]
    counts = {t: draw(st.integers(1, 8)) for t in names}
    members = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True))
    topic_sets = st.lists(st.sampled_from(names), min_size=1, unique=True)
    if draw(st.booleans()):
        same = draw(topic_sets)
        topics = {m: list(same) for m in members}
    else:
        some = st.one_of(st.just([]), topic_sets, topic_sets, topic_sets, topic_sets,
                         topic_sets) if empty else topic_sets
        topics = {m: draw(some) for m in members}
    rack_names = ["r0", "r1"]
    partition_racks: dict[str, list[list[str]]] = {}
    member_racks: dict[str, str | None] = {m: None for m in members}
    if racks and draw(st.booleans()):
        member_racks = {m: draw(st.sampled_from([None, *rack_names])) for m in members}
        partition_racks = {t: [draw(st.lists(st.sampled_from(rack_names), unique=True))
                               for _ in range(n)] for t, n in counts.items()}
    owned: Assignment = {m: [] for m in members}
    stale_claims: Assignment = {m: [] for m in members}
    for t, n in counts.items():
        subscribers = [m for m in members if t in topics[m]]
        for p in range(n):
            holder = draw(st.sampled_from([None, *subscribers]))
            if holder is not None:
                owned[holder].append((t, p))
            if stale and draw(st.integers(0, 5)) == 0:
                stale_claims[draw(st.sampled_from(members))].append((t, p))
    instance_ids = {m: draw(st.sampled_from([None, f"i-{m}"])) for m in members}
    return Group(Cluster(counts, partition_racks), topics, member_racks, instance_ids, owned,
                 stale_claims, draw(st.integers(1, 5)))


def subscriptions(group: Group, cooperative: bool, owned: Assignment | None = None,
                  generation: int | None = None) -> dict[str, Subscription]:
    """What each member sends: current owners at ``generation``; a member with stale claims
    only reports them at the previous generation."""
    owned = group.owned if owned is None else owned
    generation = group.generation if generation is None else generation
    out = {}
    for m, topics in group.topics.items():
        claims, gen = owned[m], generation
        if group.stale[m] and owned is group.owned:
            claims, gen = group.stale[m], generation - 1
        data = (encode_cooperative_user_data(gen) if cooperative
                else encode_sticky_user_data(claims, gen))
        out[m] = Subscription(list(topics), data, claims if cooperative else [], gen,
                              group.racks[m], group.instance_ids[m])
    return out


def validity_problems(group: Group, result: Assignment) -> list[str]:
    """I1: each partition at most once. I2: only partitions in the metadata, only to members
    subscribed to their topic."""
    seen: set[TopicPartition] = set()
    problems = []
    for m, parts in result.items():
        for t, p in parts:
            if (t, p) in seen:
                problems.append(f"I1 {t}-{p}")
            seen.add((t, p))
            if t not in group.topics[m] or not 0 <= p < group.cluster.partitions[t]:
                problems.append(f"I2 {t}-{p} -> {m}")
    return problems


def unassigned(group: Group, result: Assignment) -> set[TopicPartition]:
    wanted = {(t, p) for t, n in group.cluster.partitions.items() for p in range(n)
              if any(t in ts for ts in group.topics.values())}
    return wanted - {tp for parts in result.values() for tp in parts}


def is_balanced(group: Group, result: Assignment) -> bool:
    """Kafka's ``isBalanced`` (KAFKA-15106): sizes within one, or no member short of its
    potential could take a partition from a member holding at least two more."""
    sizes = {m: len(ps) for m, ps in result.items()}
    if max(sizes.values()) - min(sizes.values()) <= 1:
        return True
    holder = {tp: m for m, ps in result.items() for tp in ps}
    for m, ts in group.topics.items():
        for t in ts:
            for p in range(group.cluster.partitions[t]):
                other = holder.get((t, p))
                if other is not None and other != m and sizes[m] + 1 < sizes[other]:
                    return False
    return True


def run(group: Group, cooperative: bool, owned: Assignment | None = None,
        generation: int | None = None) -> Assignment:
    assignor = CooperativeStickyAssignor() if cooperative else StickyAssignor()
    got = assignor.assign(group.cluster, subscriptions(group, cooperative, owned, generation))
    return {m: list(a.partitions) for m, a in got.items()}


def settle(group: Group) -> Assignment:
    """Cooperative rounds until nothing is withheld (at most 4 follow-ups, KAFKA-9029)."""
    result = run(group, True)
    for round_ in range(4):
        if not unassigned(group, result):
            break
        result = run(group, True, result, group.generation + 1 + round_)
    return result


@settings(max_examples=150, deadline=None)
@given(groups(), st.booleans())
def test_i1_i2_valid(group: Group, cooperative: bool) -> None:
    """I1 and I2 hold for every group, stale claims and racks included."""
    assert not validity_problems(group, run(group, cooperative))


@settings(max_examples=150, deadline=None)
@given(groups())
def test_eager_complete_and_balanced(group: Group) -> None:
    """Eager sticky: every subscribed partition is assigned (I2) and the result is balanced
    by Kafka's own rule (I3)."""
    result = run(group, False)
    assert not unassigned(group, result)
    assert is_balanced(group, result)


@settings(max_examples=150, deadline=None)
@given(groups())
def test_cooperative_complete_after_follow_up(group: Group) -> None:
    """Cooperative: once the withheld partitions were revoked and the follow-up rebalance ran
    (owned = last result), everything is assigned, valid (I1, I2) and balanced (I3)."""
    result = settle(group)
    assert not validity_problems(group, result)
    assert not unassigned(group, result)
    assert is_balanced(group, result)


@settings(max_examples=150, deadline=None)
@given(groups(stale=False))
def test_cooperative_never_gives_away_what_is_still_owned(group: Group) -> None:
    """I5: within one cooperative round, nothing a member owns at the group's generation goes
    to another member (it must be revoked first).

    Without stale claims: when a member reports older claims, Kafka's general builder may hand
    a partition back to that previous-generation owner (KIP-341 ``prevAssignment``) without
    withholding it, since it is in that member's owned list; we reproduce Kafka there.
    """
    result = run(group, True)
    sent = subscriptions(group, True)
    for member, sub in sent.items():
        if sub.generation_id != group.generation:
            continue
        for tp in sub.owned_partitions:
            for other, parts in result.items():
                assert other == member or tp not in parts, (tp, member, other)


def _kept(group: Group, cooperative: bool, previous: Assignment) -> None:
    again = run(group, cooperative, previous, group.generation + 1)
    assert {m: set(ps) for m, ps in again.items()} == {m: set(ps) for m, ps in previous.items()}


@settings(max_examples=150, deadline=None)
@given(groups(stale=False, racks=False), st.booleans())
def test_balanced_previous_assignment_is_kept(group: Group, cooperative: bool) -> None:
    """I4a: the assignor's own settled answer (complete, balanced, valid), reported back by
    the same members, is kept as it is (sets of partitions per member). Cooperative groups
    with an empty subscription are left out: there Kafka revokes a partition of a balanced
    assignment and withholds it, an answer that keeps I1 and I2 and is reproduced (D2)."""
    if cooperative:
        assume(all(group.topics.values()))
    previous = settle(group) if cooperative else run(group, False)
    assert is_balanced(group, previous) and not unassigned(group, previous)
    _kept(group, cooperative, previous)


@st.composite
def balanced_previous(draw: st.DrawFn, empty: bool) -> tuple[Group, Assignment]:
    """A group without racks or stale claims and a complete, valid previous assignment made
    at random (each partition, in a random order, to one of its least-loaded subscribers)
    and kept only when balanced by Kafka's rule."""
    group = draw(groups(stale=False, racks=False, empty=empty))
    previous: Assignment = {m: [] for m in group.topics}
    order = [(t, p) for t, n in group.cluster.partitions.items() for p in range(n)]
    for t, p in draw(st.permutations(order)):
        takers = [m for m, ts in group.topics.items() if t in ts]
        if takers:
            least = min(len(previous[m]) for m in takers)
            previous[draw(st.sampled_from([m for m in takers
                                            if len(previous[m]) == least]))].append((t, p))
    assume(is_balanced(group, previous))
    return group, previous


@settings(max_examples=150, deadline=None)
@given(balanced_previous(empty=True))
def test_sticky_keeps_any_balanced_valid_assignment(case: tuple[Group, Assignment]) -> None:
    """I4a, eager sticky: any complete, valid assignment balanced by Kafka's rule, reported
    by the same members at one generation (empty subscriptions included), moves nothing."""
    group, previous = case
    _kept(group, False, previous)


@settings(max_examples=150, deadline=None)
@given(balanced_previous(empty=False))
def test_cooperative_keeps_any_balanced_valid_assignment(
        case: tuple[Group, Assignment]) -> None:
    """I4a, cooperative-sticky: the same, for members that all subscribe to something (see
    D2 for empty subscriptions)."""
    group, previous = case
    _kept(group, True, previous)
