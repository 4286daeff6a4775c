"""A member subscribed to a topic the story has not made. Kafka creates a topic a consumer's
Metadata request names when the consumer allows it (``auto.create.topics.enable``, on by
default; aiokafka allows it): the model takes the cluster's topic as metadata (no false I2),
and the story may still make or grow it afterwards. librdkafka never asks for one, and sends
no JoinGroup while none of its subscribed topics exists: the group is settled without it (no
false I11) until the story makes the topic."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")

from groupcheck.model.event_types import Join  # noqa: E402
from groupcheck.model.events import DomainEvent  # noqa: E402
from groupcheck.model.group_events import Partitions, Settle  # noqa: E402
from groupcheck.model.machine_config import wire_config  # noqa: E402
from groupcheck.model.replay import replay_events  # noqa: E402
from groupcheck.targets.wire.wire_group import WireGroup  # noqa: E402

from helpers.environment import missing, resolve  # noqa: E402

pytestmark = pytest.mark.wire

STORY: list[DomainEvent] = [
    Partitions("t0", 1),
    Join("c1", ("t1",), ("range",)),  # t1 does not exist yet: c1's Metadata request makes it
    Settle(),
    Partitions("t1", 1),  # as many as the cluster made: nothing to do
    Partitions("t1", 2),  # grows it
    Settle(),
]


@pytest.mark.parametrize(("client", "creates"), [("aiokafka", True), ("librdkafka", False)])
def test_a_member_subscribed_to_a_topic_the_story_never_made(client: str, creates: bool) -> None:
    if missing(client):
        pytest.skip(missing(client))
    target = resolve(f"wire:{client}:range")
    assert target.group is not None and target.hints is not None
    config = wire_config(target.hints.assignor, steering=True, profiles=target.hints.profiles)
    outcome = replay_events(target.group(), STORY, config.promises, target.hints.generations)
    assert outcome.violations == [], "\n".join(outcome.story)
    made = "     ! cluster: t1 has 1 partition(s), made at a client's Metadata request"
    assert (made in outcome.story) == creates, "\n".join(outcome.story)
    last = outcome.views[-1]
    assert last is not None and last.members["c1"].owned == {("t1", 0), ("t1", 1)}


def test_a_partitions_event_creates_grows_keeps_and_never_shrinks_a_topic() -> None:
    """What a story's ``partitions`` event asks of the cluster, given what it already has:
    a new topic is created, a larger count grows it, the count a client's Metadata request
    already made is left alone, and a smaller one is refused (Kafka never shrinks a topic)."""
    calls: list[tuple[str, str, int]] = []
    topics = {"made": 2, "grown": 1}
    group = WireGroup.__new__(WireGroup)
    group.backend = SimpleNamespace(  # type: ignore[assignment]
        topics=topics, failure=lambda: None,
        create_topic=lambda t, n: calls.append(("create", t, n)),
        grow_topic=lambda t, n: calls.append(("grow", t, n)))
    group.pool = SimpleNamespace(failure=lambda: None)  # type: ignore[assignment]
    group.set_partitions("new", 2)
    group.set_partitions("grown", 3)
    group.set_partitions("made", 2)
    assert calls == [("create", "new", 2), ("grow", "grown", 3)]
    with pytest.raises(ValueError, match="topic made has 2 partitions; it cannot shrink to 1"):
        group.set_partitions("made", 1)
