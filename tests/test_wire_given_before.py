"""What a member was given before a generation (`round_records.given_before`), read from the
coordinator's rounds: the last earlier generation whose SyncGroup answer it got. An answer
steering held back for longer than the members' SyncGroup request timeout was not got (the
client gave the request up first and owns what it had), so a claim the member then makes
comes from the generation before (I6, KAFKA-7026's stale claims)."""

from __future__ import annotations

from groupcheck.impl.consumer_protocol import encode_assignment
from groupcheck.impl.types import Assignment
from groupcheck.targets.wire.backends.backend import GroupRound
from groupcheck.targets.wire.round_records import given_before

T = "t0"


def _round(generation: int, given: dict[str, list[int]],
           waited_ms: dict[str, int] | None = None) -> GroupRound:
    return GroupRound(generation, "cooperative-sticky", "m1",
                      {m: b"" for m in given},
                      {m: encode_assignment(Assignment([(T, p) for p in ps]))
                       for m, ps in given.items()},
                      {m: m.replace("m", "c") for m in given}, True,
                      synced=frozenset(given), waited_ms=waited_ms or {})


def _given(waited_ms: int, timeout_ms: int | None) -> tuple[tuple[str, int], ...]:
    rounds = [_round(1, {"m1": [0, 1, 2, 3]}),
              _round(2, {"m1": [0, 1], "m2": []}, {"m1": waited_ms}),
              _round(3, {"m1": [0, 1], "m2": [2, 3]})]
    return given_before(rounds, rounds[-1], timeout_ms)["c1"]


def test_an_answer_held_past_the_sync_request_timeout_was_not_got() -> None:
    assert _given(11_000, 10_000) == tuple((T, p) for p in range(4))


def test_an_answer_held_within_the_sync_request_timeout_was_got() -> None:
    assert _given(3_000, 10_000) == ((T, 0), (T, 1))


def test_with_no_modelled_timeout_a_held_answer_counts_as_got() -> None:
    assert _given(11_000, None) == ((T, 0), (T, 1))


def test_a_consumer_that_rejoined_under_a_new_member_id_was_given_what_its_old_id_was() -> None:
    """Told UNKNOWN_MEMBER_ID, Kafka's Java consumer rejoins under a new member id, and its
    sticky user data still claims what generation 1 gave it, with generation 1 (KIP-341): a
    claim of the same consumer, not a stranger's."""
    rounds = [_round(1, {"m1": [0, 1, 2, 3]}), _round(2, {"m1b": [0, 1], "m2": [2, 3]})]
    rounds[1].names["m1b"] = "c1"
    assert given_before(rounds, rounds[-1])["c1"] == tuple((T, p) for p in range(4))
    assert "c2" not in given_before(rounds, rounds[-1])
