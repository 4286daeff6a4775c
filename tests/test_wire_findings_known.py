"""The long wire runs pass a violation only when a recorded finding of its client has the
same text but for names and numbers (`helpers.wire_findings.unknown`): the fault engine's
numbered members and topics (``c1-72``, ``t0-72-1``) read as a story's (``c1``, ``t0-1``)."""

from __future__ import annotations

import pytest

from helpers.wire_findings import expect_kafka_python_hang_in, unknown


def test_a_fault_points_numbered_names_match_a_findings_plain_ones() -> None:
    """kafka-python's recorded cooperative claim without a generation, as a fault point of
    the check engine saw it."""
    seen = "gen 4: I6: c1-72 claims 2 partition(s) with no generation"
    assert unknown(("kafka-python",), [seen]) == []


def test_a_violation_of_another_client_or_shape_is_unknown() -> None:
    seen = "gen 4: I6: c1-72 claims 2 partition(s) with no generation"
    assert unknown(("java",), [seen]) == [seen]
    other = "gen 4: I6: c1-72 claims 2 partition(s) with generation 1 after generation 3"
    assert unknown(("kafka-python",), [other]) == [other]


def test_kafka_pythons_delivery_finding_and_any_i11_of_its_hang_are_known() -> None:
    """The stale-prefetch finding names members after their commit styles (``m-none``); the
    hang shows as whichever I11 the settle's bound words (kafka-python's only)."""
    rewind = "I17: c1-15 started t0-15-1 at 1, before the committed offset 2 (start-earlier)"
    bound = ("I11: not settled after 28215 ms; the bound is 28200 ms = 4 rebalances × "
             "(heartbeat interval 300 + rebalance timeout 3000) + margin 15000 ms")
    assert unknown(("kafka-python",), [rewind, bound]) == []
    assert unknown(("librdkafka",), [bound]) == [bound]


def test_an_i16_finding_is_known_whatever_member_id_and_api_it_met() -> None:
    """aiokafka's recorded I16 met ILLEGAL_GENERATION on a Heartbeat; the same drop after it
    on a SyncGroup, under another drawn member id, is the same finding."""
    seen = ("I16: c1-22 gave its member id c1-22-c7eff79b-e486-4587-a8b5-366657f0460a up "
            "after ILLEGAL_GENERATION on SyncGroup; its profile (java) keeps it")
    assert unknown(("aiokafka",), [seen]) == []
    kept = seen.replace("gave its member id", "rejoined with its member id").replace(
        " up after", " after").replace("keeps it", "gives it up")
    assert unknown(("aiokafka",), [kept]) == [kept]


def test_a_finding_of_a_mixed_group_is_known_only_where_all_its_clients_play() -> None:
    """kafka-python's leader dropping a static member shows in a group of three clients
    (findings/wire-mixed-kafka-python-range-static-dropped-I3.json): known in a group of
    those clients however its members are numbered, not in a group lacking one of them."""
    dropped = ("I3: t0's 3 partitions are split c1 2, c2 1, c3 0 among its subscribers "
               "(range: shares differ by at most one)")
    assert unknown(("aiokafka", "kafka-python", "librdkafka", "java"), [dropped]) == []
    assert unknown(("librdkafka",), [dropped]) == [dropped]
    assert unknown(("librdkafka", "aiokafka"), [dropped]) == [dropped]


BOUND = ("I11: not settled after 28230 ms; the bound is 28200 ms = 4 rebalances × "
         "(heartbeat interval 300 + rebalance timeout 3000) + margin 15000 ms")
SILENT = ("     ! group: nothing happened for 28s; c1 owns []; c1 sent its coordinator nothing "
          "since its SyncGroup answer of generation 3 (its session, 2000 ms, ran out)")


def test_a_story_cut_short_by_kafka_pythons_hang_is_an_expected_failure_naming_it() -> None:
    with pytest.raises(pytest.xfail.Exception, match="kafka-python's recorded hang.*c1 sent"):
        expect_kafka_python_hang_in(["  1. c1 joins", SILENT, SILENT], [BOUND], {"kafka-python"})


@pytest.mark.parametrize("story,violations,clients", [
    ([SILENT], [BOUND, "I1: t0-1 went to c2 while c1 still owned it"], {"kafka-python"}),
    ([SILENT], [BOUND], {"librdkafka"}),
    (["  1. c1 joins"], [BOUND], {"kafka-python"}),
    ([SILENT], [], {"kafka-python"}),
])
def test_anything_else_is_left_for_the_test_to_judge(story: list[str], violations: list[str],
                                                     clients: set[str]) -> None:
    """Another invariant, another client, no silent member or no violation: not the hang."""
    expect_kafka_python_hang_in(story, violations, clients)
