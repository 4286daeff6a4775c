"""The coordinator's commits are styled as they come (`deliveries._Matching`): whatever
moments a group reads them at, each answer gets the style a reading of everything at once
gives — the first unmatched commit event of its member and offsets written at or after it,
else its member's style — and an answer logged late, among earlier ones, is read again from
the start."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.targets.wire.deliveries import Deliveries

MEMBERS = ("c1", "c2")
OFFSETS = ((("t0", 0, 1),), (("t0", 0, 2), ("t0", 1, 5)))


def _answer(seq: int, member: str, offsets: Any) -> Any:
    return SimpleNamespace(seq=seq, ts=seq * 10, client_id=member, generation=1,
                           offsets=offsets, error_names=lambda: (None,) * len(offsets))


def _whole(answers: list[Any], reported: dict[Any, list[Any]],
           styles: dict[str, str]) -> list[str | None]:
    """Every answer's style, read at once: the rule the incremental reading keeps."""
    used: set[int] = set()
    out: list[str | None] = []
    for answer in answers:
        key = (answer.client_id, frozenset(answer.offsets))
        event = next((e for e in reported.get(key, ()) if e.ts >= answer.ts
                      and e.seq not in used), None)
        if event is not None:
            used.add(event.seq)
            out.append(event.style)
        else:
            style = styles.get(answer.client_id)
            out.append(None if style in (None, "none") else style)
    return out


#: a step: an answer (member, offsets), a commit event (member, offsets, how long after
#: the latest answer it was written, style), a read, or a member's style changing
STEPS = st.one_of(
    st.tuples(st.just("answer"), st.sampled_from(MEMBERS), st.sampled_from(OFFSETS)),
    st.tuples(st.just("event"), st.sampled_from(MEMBERS), st.sampled_from(OFFSETS),
              st.integers(-15, 15), st.sampled_from(("sync", "revoke", "auto"))),
    st.tuples(st.just("read")),
    st.tuples(st.just("style"), st.sampled_from(MEMBERS), st.sampled_from(("auto", "none"))))


@settings(max_examples=300, deadline=None)
@given(st.lists(STEPS, max_size=40))
def test_commits_styled_as_they_come_match_a_reading_of_everything_at_once(
        steps: list[tuple[Any, ...]]) -> None:
    """Property: after any interleaving of answers, events, reads and style changes, the
    styles read equal `_whole`'s on the same answers and events."""
    deliveries, answers = Deliveries(), list[Any]()
    deliveries.styles.update({"c1": "auto", "c2": "none"})
    backend = SimpleNamespace(commits=lambda: list(answers))
    seq = 0
    for step in steps:
        if step[0] == "answer":
            seq += 1
            answers.append(_answer(seq, step[1], step[2]))
        elif step[0] == "event":
            seq += 1
            ts = max(0, (answers[-1].ts if answers else 0) + step[3])
            deliveries.reported[(step[1], frozenset(step[2]))].append(
                SimpleNamespace(ts=ts, seq=seq, style=step[4]))
        elif step[0] == "style":
            deliveries.styles[step[1]] = step[2]
        else:
            deliveries._commits(backend)
    commits = deliveries._commits(backend)
    reported = {k: list(v) for k, v in deliveries.reported.items()}
    expected = _whole(answers, reported, deliveries.styles)
    by_answer = [c.style for c in commits]  # one commit per answer: no errors
    assert by_answer == expected
    assert [c.ts for c in commits] == [a.ts for a in answers]


def test_an_answer_logged_late_among_earlier_ones_is_read_again_from_the_start() -> None:
    deliveries, answers = Deliveries(), [_answer(1, "c1", OFFSETS[0]), _answer(3, "c1",
                                                                           OFFSETS[0])]
    deliveries.styles["c1"] = "auto"
    backend = SimpleNamespace(commits=lambda: list(answers))
    deliveries.reported[("c1", frozenset(OFFSETS[0]))].append(
        SimpleNamespace(ts=15, seq=9, style="sync"))
    assert [c.style for c in deliveries._commits(backend)] == ["sync", "auto"]
    answers.insert(1, _answer(2, "c1", OFFSETS[0]))  # received before the third, logged after
    assert [c.ts for c in deliveries._commits(backend)] == [10, 20, 30]
    assert [c.style for c in deliveries._commits(backend)] == ["sync", "auto", "auto"]
