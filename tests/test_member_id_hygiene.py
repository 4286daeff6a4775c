"""I16 member-id hygiene on fake broker exchange logs: after each coordinator error the
member's next JoinGroup carries its member id or none, as its client's profile says; an id
given up without a LeaveGroup while the coordinator held it is a member left behind."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.broker.faults import ERROR_CODES
from groupcheck.broker.protocol import API_KEYS
from groupcheck.broker.steering import Exchange, Who
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import GroupView
from groupcheck.properties.member_id_rules import ErrorResponse, NextJoin, member_id_after_error
from groupcheck.properties.membership import PROFILE_TABLE, ClientProfile
from groupcheck.targets.wire.member_ids import Ledger, error_answers, judge_member_ids

JAVA = PROFILE_TABLE["java"]
#: a release that gave its id up after ILLEGAL_GENERATION too (Kafka's client before 3.x)
OLD = replace(JAVA, name="old", keeps_member_id_after=frozenset({"REBALANCE_IN_PROGRESS"}))


@dataclass(frozen=True)
class _Request:
    member_id: str
    session_timeout: int = 2000  # a JoinGroup's, in ms


@dataclass(frozen=True)
class _Response:
    error_code: int
    member_id: str = ""  # a JoinGroup's


def _exchange(seq: int, api: str, member_id: str, error: str = "", *, client: str = "c1",
              ms: int = 0, took: int = 5, steering: str | None = None) -> Exchange:
    return Exchange(seq, 1, Who(client, member_id, None), API_KEYS[api], 0, seq,
                    _Request(member_id), ms, client, _Response(ERROR_CODES.get(error, 0)),
                    ms + took, steering)


def _story(error: str, rejoin_with: str, *, leave: bool = False,
           steering: str | None = None) -> list[Exchange]:
    log = [_exchange(0, "Heartbeat", "m-1", error, ms=100, steering=steering),
           _exchange(1, "Heartbeat", "other", client="c2", ms=110)]
    if leave:
        log.append(_exchange(2, "LeaveGroup", "m-1", ms=120))
    return [*log, _exchange(3, "JoinGroup", rejoin_with, ms=150, took=2300)]


def _judge(log: list[Exchange], profile: ClientProfile = JAVA) -> tuple[list[str], list[str]]:
    return judge_member_ids(log, lambda member: profile)


def test_a_member_that_drops_its_id_after_unknown_member_id_holds() -> None:
    assert _judge(_story("UNKNOWN_MEMBER_ID", "")) == ([], [])


def test_a_member_that_keeps_its_id_after_illegal_generation_holds() -> None:
    assert _judge(_story("ILLEGAL_GENERATION", "m-1")) == ([], [])


def test_a_member_that_keeps_a_fenced_id_breaks_i16() -> None:
    violations, _ = _judge(_story("FENCED_INSTANCE_ID", "m-1"))
    assert violations == ["I16: c1 rejoined with its member id m-1 after FENCED_INSTANCE_ID on "
                          "Heartbeat; its profile (java) gives it up"]


def test_a_member_that_drops_its_id_after_rebalance_in_progress_breaks_i16() -> None:
    violations, _ = _judge(_story("REBALANCE_IN_PROGRESS", ""))
    assert violations == ["I16: c1 gave its member id m-1 up after REBALANCE_IN_PROGRESS on "
                          "Heartbeat; its profile (java) keeps it"]


def test_each_client_is_judged_by_its_own_profile() -> None:
    dropped = _story("ILLEGAL_GENERATION", "")
    assert _judge(dropped, OLD) == ([], [])
    assert len(_judge(dropped, JAVA)[0]) == 1


def test_an_id_dropped_while_the_coordinator_held_it_is_a_member_left_behind() -> None:
    _, reports = _judge(_story("UNKNOWN_MEMBER_ID", "", steering="error UNKNOWN_MEMBER_ID"))
    assert reports == ["c1 left its member id m-1 behind after UNKNOWN_MEMBER_ID on Heartbeat "
                       "(no LeaveGroup; the coordinator still held it): it kept the group "
                       "waiting 2300 ms of its next join"]


def test_an_id_given_up_with_a_leave_group_is_not_left_behind() -> None:
    log = _story("UNKNOWN_MEMBER_ID", "", leave=True, steering="error UNKNOWN_MEMBER_ID")
    assert _judge(log) == ([], [])


def _held(held_ms: int) -> list[Exchange]:
    """A member (session 2 s) whose Heartbeat answer the broker held ``held_ms``, then its
    join without its id."""
    return [_exchange(0, "JoinGroup", "m-1"),
            _exchange(1, "Heartbeat", "m-1", "REBALANCE_IN_PROGRESS", ms=100, took=held_ms,
                      steering="delay"),
            _exchange(2, "JoinGroup", "", ms=100 + held_ms + 10)]


def test_an_answer_held_back_past_the_session_timeout_lets_the_member_drop_its_id() -> None:
    """librdkafka's own session timer gives the id up when no answer came for a session
    timeout; the coordinator expires the id too, so dropping it is right whatever the error."""
    assert _judge(_held(3000))[0] == []
    assert _judge(_held(2000))[0] == []
    assert _judge(_held(1500))[0] == ["I16: c1 gave its member id m-1 up after "
                                      "REBALANCE_IN_PROGRESS on Heartbeat; its profile (java) "
                                      "keeps it"]


def test_an_answer_held_past_the_session_between_the_error_and_the_join_lets_it_drop_its_id(
        ) -> None:
    """librdkafka rejoins at once after REBALANCE_IN_PROGRESS (a join the same millisecond:
    not judged); its next heartbeat is held 3 s (session 2 s), its own session timer gives
    the id up and it joins without one: that join answers the lapsed session, not the error.
    Held only 1.5 s, the join without the id breaks I16."""
    def story(held_ms: int) -> list[Exchange]:
        return [_exchange(0, "JoinGroup", "m-1"),
                _exchange(1, "Heartbeat", "m-1", "REBALANCE_IN_PROGRESS", ms=618, took=0),
                _exchange(2, "JoinGroup", "m-1", ms=618, took=1),
                _exchange(3, "Heartbeat", "m-1", ms=1054, took=held_ms, steering="delay"),
                _exchange(4, "JoinGroup", "", ms=3625)]
    assert _judge(story(3000))[0] == []
    assert _judge(story(1500))[0] == ["I16: c1 gave its member id m-1 up after "
                                      "REBALANCE_IN_PROGRESS on Heartbeat; its profile (java) "
                                      "keeps it"]


def test_a_log_read_a_part_at_a_time_keeps_each_members_session_timeout() -> None:
    ledger = Ledger()
    log = _held(3000)
    assert list(error_answers(log[:1], ledger)) == []
    [(_, answer, join)] = list(error_answers(log[1:], ledger))
    assert answer.session_lapsed and join is not None
    assert member_id_after_error(answer, join, JAVA) == []


def test_a_join_sent_before_the_error_answer_went_out_is_not_the_next_join() -> None:
    """librdkafka's heartbeat with a member id it has just been given is answered
    UNKNOWN_MEMBER_ID while its JoinGroup with that id is already on its way: that join
    says nothing of what the client did with the answer; the one after it does."""
    log = [_exchange(0, "Heartbeat", "m-2", "UNKNOWN_MEMBER_ID", ms=2323, took=0),
           _exchange(1, "JoinGroup", "m-2", ms=2323, took=1400)]
    assert _judge(log) == ([], [])
    late = [*log, _exchange(2, "JoinGroup", "m-2", ms=4000)]
    assert _judge(late)[0] == ["I16: c1 rejoined with its member id m-2 after "
                               "UNKNOWN_MEMBER_ID on Heartbeat; its profile (java) gives it up"]


def test_an_error_answered_before_the_next_join_supersedes_the_first() -> None:
    """REBALANCE_IN_PROGRESS on a Heartbeat, then (the join under way) UNKNOWN_MEMBER_ID on
    the JoinGroup: the member's next join, without its id, answers the second error."""
    log = [_exchange(0, "Heartbeat", "m-1", "REBALANCE_IN_PROGRESS", ms=100, took=0),
           _exchange(1, "JoinGroup", "m-1", "UNKNOWN_MEMBER_ID", ms=100, took=1),
           _exchange(2, "JoinGroup", "", ms=500)]
    assert _judge(log) == ([], [])


def test_an_error_answered_after_one_that_gave_the_id_up_is_answered_by_the_same_join(
        ) -> None:
    """UNKNOWN_MEMBER_ID on a Heartbeat (Java gives its id up), then REBALANCE_IN_PROGRESS
    to a request that was already on its way with the old id: the join without the id
    answers both, and giving it up is right. Were the second error the only one, Java
    would keep its id (its profile), and dropping it breaks I16."""
    log = [_exchange(0, "Heartbeat", "m-1", "UNKNOWN_MEMBER_ID", ms=100, took=0),
           _exchange(1, "OffsetCommit", "m-1", "REBALANCE_IN_PROGRESS", ms=101, took=0),
           _exchange(2, "JoinGroup", "", ms=500)]
    assert _judge(log) == ([], [])
    alone = [log[1], replace(log[2], seq=2)]
    assert _judge(alone)[0] == [
        "I16: c1 gave its member id m-1 up after REBALANCE_IN_PROGRESS on OffsetCommit; its "
        "profile (java) keeps it"]


def test_a_join_by_the_consumer_that_replaced_a_closed_one_answers_none_of_its_errors(
        ) -> None:
    """A static member restarts: the old consumer, answered REBALANCE_IN_PROGRESS, is
    closed (no LeaveGroup) and a new one joins under the same client id without a member
    id. That join is not the old consumer giving its id up."""
    answer = replace(_exchange(0, "Heartbeat", "m-1", "REBALANCE_IN_PROGRESS", ms=100),
                     received_ns=1_000)
    join = replace(_exchange(1, "JoinGroup", "", ms=500), received_ns=3_000)
    ledger = Ledger()
    assert [j for _, _, j in error_answers([answer, join], ledger)] == [NextJoin("", False, 5)]
    ledger = Ledger(closed={"c1": [2_000]})
    assert [j for _, _, j in error_answers([answer, join], ledger)] == [None]


def test_unknown_member_id_to_a_pending_id_is_not_judged() -> None:
    """KIP-394: the id MEMBER_ID_REQUIRED handed out is pending until a join carries it;
    Kafka's coordinator answers a heartbeat with it UNKNOWN_MEMBER_ID (librdkafka sends one
    while its join is under way), and joining with it is right."""
    handed = replace(_exchange(0, "JoinGroup", ""), response=_Response(79, "m-2"))
    log = [handed, _exchange(1, "Heartbeat", "m-2", "UNKNOWN_MEMBER_ID", ms=10, took=0),
           _exchange(2, "JoinGroup", "m-2", ms=20)]
    assert _judge(log) == ([], [])
    joined = [handed, _exchange(1, "JoinGroup", "m-2", ms=5, took=1),
              _exchange(2, "Heartbeat", "m-2", "UNKNOWN_MEMBER_ID", ms=10, took=0),
              _exchange(3, "JoinGroup", "m-2", ms=20)]
    assert _judge(joined)[0] == ["I16: c1 rejoined with its member id m-2 after "
                                 "UNKNOWN_MEMBER_ID on Heartbeat; its profile (java) gives it up"]


def test_another_members_join_is_not_the_next_join() -> None:
    log = [_exchange(0, "Heartbeat", "m-1", "ILLEGAL_GENERATION"),
           _exchange(1, "JoinGroup", "", client="c2", ms=10),
           _exchange(2, "JoinGroup", "m-1", ms=20)]
    assert _judge(log) == ([], [])


def test_an_error_on_a_request_without_a_member_id_judges_nothing() -> None:
    assert member_id_after_error(ErrorResponse("c1", "", "JoinGroup", "UNKNOWN_MEMBER_ID"),
                                 NextJoin("m-9"), JAVA) == []


def test_the_model_judges_a_views_rejoins_by_the_members_profile() -> None:
    steered = ErrorResponse("c1", "m-1", "Heartbeat", "ILLEGAL_GENERATION", steered=True)
    model = ReferenceModel()
    out = model.observe(GroupView(0, "Stable", None, {}, {}, True,
                                  rejoins=((steered, NextJoin("", waited_ms=1800)),)))
    assert out == ["I16: c1 gave its member id m-1 up after ILLEGAL_GENERATION on Heartbeat; "
                   "its profile (kip) keeps it"]
    assert model.reported == [("group", "c1 left its member id m-1 behind after "
                               "ILLEGAL_GENERATION on Heartbeat (no LeaveGroup; the coordinator "
                               "still held it): it kept the group waiting 1800 ms of its next "
                               "join")]


_STEPS = st.tuples(st.sampled_from(("Heartbeat", "JoinGroup", "SyncGroup", "OffsetCommit",
                                    "LeaveGroup")),
                   st.sampled_from(("c1", "c2")), st.sampled_from(("", "m-1", "m-2")),
                   st.sampled_from(("", "", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION",
                                    "REBALANCE_IN_PROGRESS")),
                   st.booleans())


@settings(max_examples=200, deadline=None)
@given(st.lists(_STEPS, max_size=12), st.lists(st.integers(0, 12), max_size=30))
def test_plain_offset_commits_change_no_member_ids_story(
        steps: list[tuple[str, str, str, str, bool]], plain_at: list[int]) -> None:
    """Property: the error answers and next joins read from a log are the same with any
    number of plain OffsetCommits (no error, not steered, answered) slipped in, as a client
    committing in a loop slips in thousands."""
    def log(with_plain: bool) -> list[Exchange]:
        out: list[Exchange] = []
        for i, (api, client, member, error, steered) in enumerate(steps):
            if with_plain:
                out += [_exchange(len(out), "OffsetCommit", member, client=client,
                                  ms=10 * i) for _ in range(plain_at.count(i))]
            out.append(_exchange(len(out), api, member, error, client=client, ms=10 * i + 5,
                                 steering="held" if steered else None))
        return out

    def story(exchanges: list[Exchange]) -> list[tuple[ErrorResponse, NextJoin | None]]:
        return [(answer, join) for _, answer, join in error_answers(exchanges)]

    assert story(log(True)) == story(log(False))


def test_a_join_under_way_that_fails_is_what_the_next_join_answers() -> None:
    """c1's JoinGroup read in the millisecond its REBALANCE_IN_PROGRESS went out is passed
    over as under way; it fails (NOT_COORDINATOR: the coordinator moved), and c1's next
    join, without its id, answers that failure, which no profile judges, not the rebalance
    (Java 2.8.0 gives its id up there; the fault engine took it for an I16)."""
    log = [_exchange(0, "Heartbeat", "m-1", "REBALANCE_IN_PROGRESS", ms=100, took=0),
           _exchange(1, "JoinGroup", "m-1", "NOT_COORDINATOR", ms=100, took=0),
           _exchange(2, "JoinGroup", "", ms=200, took=5)]
    assert _judge(log) == ([], [])
    closed = [log[0], replace(log[1], response=_Response(0), answered_ms=None,
                              steering="close JoinGroup"), log[2]]
    assert _judge(closed) == ([], [])
    answered = [log[0], replace(log[1], received_ms=101, answered_ms=101), log[2]]
    assert _judge(answered) == ([], [])  # the join that answered kept the id


def test_a_join_under_way_asked_for_its_member_id_is_the_join_going_on() -> None:
    """KIP-394's MEMBER_ID_REQUIRED round is no failure: after ILLEGAL_GENERATION, a join
    without an id read in the answer's millisecond, then the join with the id the
    coordinator handed out: the member gave its id up (Java 2.8.0, F-W15)."""
    log = [_exchange(0, "Heartbeat", "m-1", "ILLEGAL_GENERATION", ms=100, took=0),
           _exchange(1, "JoinGroup", "", "MEMBER_ID_REQUIRED", ms=100, took=0),
           _exchange(2, "JoinGroup", "m-2", ms=103, took=5)]
    violations, _ = _judge(log)
    assert len(violations) == 1 and "gave its member id m-1 up after ILLEGAL_GENERATION" \
        in violations[0], violations


def test_a_log_read_again_from_below_an_answer_counts_each_error_once() -> None:
    """`GroupcheckBackend.rejoins` reads the log again from below an answer whose next join
    it still waits for: the second reading, with the same ledger, lists the error alone
    (its ``also`` once said "and before it ILLEGAL_GENERATION", the error itself)."""
    ledger = Ledger()
    first = [_exchange(0, "Heartbeat", "m-1", ms=50),
             _exchange(1, "Heartbeat", "m-1", "ILLEGAL_GENERATION", ms=100)]
    assert [join for _, _, join in error_answers(first, ledger)] == [None]
    again = [*first[1:], _exchange(2, "JoinGroup", "m-1", ms=150)]
    (_, answer, join), = error_answers(again, ledger)
    assert answer.also == () and join is not None and join.member_id == "m-1"


def test_an_error_answer_its_client_never_read_is_not_judged() -> None:
    """Kafka's Java consumer closes the coordinator's connection when a SyncGroup answer
    outlives its request timeout; the broker still answers the heartbeat queued behind it
    (UNKNOWN_MEMBER_ID: the session has lapsed by then), but the client never reads that
    answer, so its next join with its id answers the closed connection, not the error."""
    log = _story("UNKNOWN_MEMBER_ID", "m-1")
    assert len(_judge(log)[0]) == 1
    assert _judge([replace(log[0], unread=True), *log[1:]]) == ([], [])
