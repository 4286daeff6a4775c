"""The java and kafkajs drivers' long wire runs (tox -e wire): every assignor each client
has, a mixed group of three clients, and the replays of the findings that take a minute
(the group must be seen idle before it counts as never settling)."""

from __future__ import annotations

import pytest

pytest.importorskip("confluent_kafka")
#: minutes of real clients: run by ``tox -e wire`` (``pytest -m wire``), not by default
pytestmark = [pytest.mark.wire, pytest.mark.slow]

from groupcheck.engines.saved.files import read_saved, replay_events_file  # noqa: E402
from groupcheck.model.events import read_events  # noqa: E402
from groupcheck.model.group_events import Settle  # noqa: E402
from groupcheck.model.replay import load, replay_events, replay_file  # noqa: E402

from helpers.environment import SETTINGS, group_target_factory  # noqa: E402
from helpers.kafka_releases import producer_needs_native_zstd, repo_releases  # noqa: E402
from helpers.wire_cases import slow_revoke, smoke, with_profiles  # noqa: E402
from test_drivers import FINDINGS, need, replay, run  # noqa: E402


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_wire_java_smoke_every_assignor(assignor: str) -> None:
    need("java")
    assert run(f"wire:java:{assignor}", with_profiles(smoke(assignor), "java")) == []


def test_finding_java_member_stalled_past_max_poll_interval_overlaps_until_its_next_poll(
        ) -> None:
    """findings/wire-java-range-adversarial-stall-I1.json: Java's heartbeat thread takes the
    stalled member out of the group, the other member gets its partitions at once, and the
    stalled application is told (onPartitionsLost) only when it polls again."""
    need("java")
    data, violations, story = replay("wire-java-range-adversarial-stall-I1.json")
    assert violations and all(v.startswith("I1:") and "while c2 still owned it" in v
                              for v in violations), story


def test_finding_librdkafka_member_held_past_its_session_overlaps_until_its_own_timer(
        ) -> None:
    """findings/wire-librdkafka-range-held-answer-I1.json: the coordinator holds c1's
    OffsetCommit answer 11 s; its heartbeats wait behind it on the connection, so the
    coordinator expires c1 and gives its partitions to c2 while c1 still owns them (I1).
    Played on, librdkafka's own session timer reports them lost (not revoked) and the next
    generation shares them between both, with nothing else found."""
    need("librdkafka")
    data = load(FINDINGS / "wire-librdkafka-range-held-answer-I1.json")
    target = group_target_factory(data["target"])()
    outcome = replay_events(target, [*read_events(data["events"]), Settle()],
                            wanted=lambda _: False)
    story = "\n".join(outcome.story)
    assert outcome.violations and all(v.startswith("I1:") and "while c1-61 still owned" in v
                                      for v in outcome.violations), story
    assert outcome.delivery is not None
    first = [t for t in outcome.delivery.tenures if t.member == "c1-61" and t.generation == 1]
    assert first and all(t.end is not None and not t.revoked for t in first), story
    assert {t.member for t in outcome.delivery.tenures if t.end is None} == {"c1-61", "c2-61"}


def test_finding_java_member_whose_commit_answer_is_held_past_its_session_overlaps() -> None:
    """findings/wire-java-range-held-answer-I1.json (java@3.8.0): c1's commitSync waits on
    an OffsetCommit answer held 11 s; its heartbeat thread's requests wait behind it, the
    coordinator expires c1 and gives its partitions to c2 while c1 still owns them (I1)."""
    repo_releases("3.8.0")
    producer_needs_native_zstd("3.8.0")
    data, violations, story = replay("wire-java-range-held-answer-I1.json")
    assert data["target"] == "wire:java@3.8.0:range"
    assert violations and all(v.startswith("I1:") and "while c1-61 still owned" in v
                              for v in violations), story


def test_finding_librdkafka_never_reads_a_partition_whose_offset_fetch_met_a_moved_coordinator(
        ) -> None:
    """findings/wire-librdkafka-range-offset-fetch-moved-I11.json, replayed as a user does
    (on two nodes: the story moves its coordinator): librdkafka reports the OffsetFetch's
    NOT_COORDINATOR with no partition and never reads t0-335-3 (I11). It shows about two
    replays in three on a quiet machine, less on a loaded one (a rebalance that follows
    resets the assignment): five tries, as `test_wire_long` gives every finding."""
    need("librdkafka")
    saved = read_saved(str(FINDINGS / "wire-librdkafka-range-offset-fetch-moved-I11.json"))
    for _ in range(5):
        replayed = replay_events_file(saved, target=None, assignor=None, settings=SETTINGS)
        text = "\n".join(replayed.lines)
        assert "Failed to fetch committed offsets for 0 partition(s)" in text, text
        if replayed.reproduced:
            assert "has not read t0-335-3" in text, text
            return
        assert not replayed.different, text
    pytest.fail("not reproduced in five replays")


def _replayed_on(name: str, target: str) -> tuple[list[str], str]:
    """A finding's replay file played on ``target`` instead of its own: violations, story."""
    _, outcome = replay_file(FINDINGS / name, lambda _t: group_target_factory(target)())
    return outcome.violations, "\n".join(outcome.story)


def test_finding_aiokafka_reads_an_offset_fetch_error_as_nothing_committed_from_0_13(
        ) -> None:
    """findings/wire-aiokafka-range-offset-fetch-error-I17.json: c1's OffsetFetch is
    answered NOT_COORDINATOR. From 0.13.0 aiokafka asks OffsetFetch v2 or later, where the
    error comes at the top of the answer with no partitions; it reads only the partitions,
    finds no committed offset and starts from auto.offset.reset: records handed again. 0.12.0
    asked v1, where the error sits on each partition, and retried."""
    need("aiokafka@0.12.0", "aiokafka@0.13.0")
    name = "wire-aiokafka-range-offset-fetch-error-I17.json"
    newer, story = _replayed_on(name, "wire:aiokafka@0.13.0:range")
    assert any(v.startswith("I17:") and "(start-earlier)" in v for v in newer), story
    older, story = _replayed_on(name, "wire:aiokafka@0.12.0:range")
    assert older == [], story


def test_finding_aiokafka_never_heartbeats_again_after_a_fatal_heartbeat_error() -> None:
    """findings/wire-aiokafka-range-heartbeat-fatal-I1.json: c1's Heartbeat is answered
    INVALID_GROUP_ID. The error reaches the application once; the heartbeat task has ended
    and is never started again, so the coordinator expires c1 and gives its partitions to c2
    while c1 goes on owning them (I1)."""
    need("aiokafka")
    data, violations, story = replay("wire-aiokafka-range-heartbeat-fatal-I1.json")
    assert violations and all(v.startswith("I1:") and "while c1-30 still owned" in v
                              for v in violations), story
    assert "Unexpected exception in heartbeat task: InvalidGroupIdError" in "\n".join(story)


def test_finding_aiokafka_gives_its_member_id_up_after_illegal_generation() -> None:
    """findings/wire-aiokafka-range-illegal-generation-member-id-I16.json: after a Heartbeat
    answered ILLEGAL_GENERATION aiokafka rejoins with no member id (Java keeps it and resets
    only the generation), leaving the old id in the group until its session ends."""
    need("aiokafka")
    data, violations, story = replay("wire-aiokafka-range-illegal-generation-member-id-I16.json")
    assert violations and violations[0].startswith("I16: c1-177 gave its member id"), story
    assert "after ILLEGAL_GENERATION on Heartbeat" in violations[0]


def test_finding_java_3_2_0_commits_in_a_loop_instead_of_rejoining_a_cooperative_rebalance(
        ) -> None:
    """findings/wire-java-cooperative-sticky-commit-loop-3.2-I11.json: on 3.2.0 an
    auto-committing cooperative member that owns every partition when two members join
    sends OffsetCommit after OffsetCommit instead of its JoinGroup: the coordinator completes
    the rebalance without it and its partitions go to the others while it still holds them.
    What a view catches of that depends on timing: two owners (I1), its partitions given up
    as lost though it was never told it was fenced (I7), or a group that never settles (I11);
    3.3.1 plays the same story, settles and never overlaps (on some timings its own finding
    23 shows there, a SyncGroup answered REBALANCE_IN_PROGRESS read as a loss, I7). The loop
    shows on about two plays in three: five tries on 3.2.0, as `test_wire_long` gives every
    finding."""
    repo_releases("3.2.0")
    repo_releases("3.3.1")
    name = "wire-java-cooperative-sticky-commit-loop-3.2-I11.json"
    for _ in range(5):
        found, story = _replayed_on(name, "wire:java@3.2.0:cooperative-sticky")
        if found:
            break
    assert found and found[0].startswith(("I11: not settled", "I1: ", "c2: I7: lost")), story
    fixed, story = _replayed_on(name, "wire:java@3.3.1:cooperative-sticky")
    assert not [v for v in fixed if v.startswith(("I11:", "I1:"))], story


def test_finding_java_3_3_1_loses_its_partitions_after_a_sync_answered_rebalance_in_progress(
        ) -> None:
    """findings/wire-java-cooperative-sticky-sync-rebalance-lost-3.3-I7.json: on 3.3.1 a
    cooperative member whose SyncGroup is answered REBALANCE_IN_PROGRESS calls
    onPartitionsLost for all it owns before it rejoins under the same id (I7); 3.2.0 and
    3.4.0 play the same story and hold (rebalance answers race: each replayed twice)."""
    for release in ("3.2.0", "3.3.1", "3.4.0"):
        repo_releases(release)
    name = "wire-java-cooperative-sticky-sync-rebalance-lost-3.3-I7.json"
    found, story = _replayed_on(name, "wire:java@3.3.1:cooperative-sticky")
    assert found and found[0].startswith("c1-95: I7: lost [t0-95-0"), story
    for release in ("3.2.0", "3.4.0"):
        for _ in range(2):
            held, story = _replayed_on(name, f"wire:java@{release}:cooperative-sticky")
            assert held == [], story


def test_finding_java_leader_that_missed_its_sync_answer_moves_what_it_still_owns() -> None:
    """findings/wire-java-cooperative-sticky-lost-sync-claim-moved-3.2-3.3-I5.json: the leader
    c1 never gets its SyncGroup answer of generation 2 and claims its four partitions with
    generation 1. On 3.3.1 its assignment gives c2 partitions c1 still owns: I5 when the
    generation is judged first, I1 when a view sees both owning them first; on 3.0.0 the
    consumer's check of that assignment throws IllegalStateException from poll instead (no
    invariant judges it); 3.4.0 holds."""
    for release in ("3.0.0", "3.3.1", "3.4.0"):
        repo_releases(release)
    name = "wire-java-cooperative-sticky-lost-sync-claim-moved-3.2-3.3-I5.json"
    moved = ("gen 3: I5: t0-241-1 ", "gen 3: I5: t0-241-3 ", "I1: t0-241-1 ", "I1: t0-241-3 ")
    found, story = _replayed_on(name, "wire:java@3.3.1:cooperative-sticky")
    assert found and all(v.startswith(moved) for v in found), story
    thrown, story = _replayed_on(name, "wire:java@3.0.0:cooperative-sticky")
    assert "IllegalStateException: Assignor supporting the COOPERATIVE protocol" in story
    assert not any(v.startswith(moved) for v in thrown), story
    held, story = _replayed_on(name, "wire:java@3.4.0:cooperative-sticky")
    assert held == [], story


def test_finding_java_auto_commit_does_not_commit_what_a_cooperative_rebalance_handed(
        ) -> None:
    """findings/wire-java-cooperative-sticky-auto-commit-revoke-I17.json: c2 auto-commits
    before its JoinGroup, is handed a record on t0-3 while the join waits for c1 (whose
    heartbeat answer is 1 s late), and revokes t0-3 without committing it: c3 reads the record
    again. 3.3.1 shows it; 2.8.0 holds this story, whose assignor gives t0-2 and t0-3 to c1,
    which commits after every poll, and shows it with c1 and c2's commit styles swapped
    (…-2.8-I17.json), which 3.3.1 holds. Which of the auto-committing member's two
    partitions moves is the assignor's choice on 2.8.0 (about one play in seven gives up the
    one whose record had not come yet): five tries, as `test_wire_long` gives every finding."""
    for release in ("2.8.0", "3.3.1"):
        repo_releases(release)
    name = "wire-java-cooperative-sticky-auto-commit-revoke-I17.json"
    swapped = "wire-java-cooperative-sticky-auto-commit-revoke-2.8-I17.json"
    for file, shows, holds, member in ((name, "3.3.1", "2.8.0", "c2"),
                                       (swapped, "2.8.0", "3.3.1", "c1")):
        for _ in range(5):
            found, story = _replayed_on(file, f"wire:java@{shows}:cooperative-sticky")
            if found:
                break
        assert found == [f"I17: {member} (auto-commit) gave t0-3 up having been handed up to "
                         "0 but committed 0 (auto-commit-revoke)"], story
        held, story = _replayed_on(file, f"wire:java@{holds}:cooperative-sticky")
        assert held == [], story


def test_finding_java_up_to_3_0_0_gives_its_member_id_up_after_illegal_generation() -> None:
    """findings/wire-java-range-illegal-generation-member-id-2.8-3.0-I16.json: told
    ILLEGAL_GENERATION on its heartbeat, Kafka's Java consumer 2.8.0 rejoins without its
    member id (I16 under the ``java`` profile); 3.2.0 resets only the generation and keeps
    it."""
    for release in ("2.8.0", "3.2.0"):
        repo_releases(release)
    name = "wire-java-range-illegal-generation-member-id-2.8-3.0-I16.json"
    found, story = _replayed_on(name, "wire:java@2.8.0:range")
    assert any(v.startswith("I16: ") and "up after ILLEGAL_GENERATION" in v
               for v in found), story
    kept, story = _replayed_on(name, "wire:java@3.2.0:range")
    assert kept == [], story


def test_wire_java_revoke_callback_slower_than_the_rebalance() -> None:
    need("java")
    violations = run("wire:java:range:adversarial", with_profiles(slow_revoke("range"), "java"))
    assert all(v.startswith("I1") for v in violations), violations


def test_wire_mixed_java_librdkafka_kafka_python_smoke() -> None:
    need("java", "librdkafka", "kafka-python")
    events = with_profiles(smoke("range"), "java", "librdkafka", "kip")
    assert run("wire:mixed:java+librdkafka+kafka-python:range", events) == []


def test_finding_java_and_kafkajs_cannot_share_a_group() -> None:
    """findings/wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json: KafkaJS's round
    robin is named RoundRobinAssigner, Java's roundrobin; the KafkaJS member is refused
    (INCONSISTENT_GROUP_PROTOCOL) and the group never holds both."""
    need("java", "kafkajs")
    data, violations, story = replay(
        "wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json")
    assert violations == ["I11: the group is idle but not settled"], story
    assert any("incompatible" in line for line in story), story
