"""``bisect --tries N``: a story of real clients that shows only now and then (finding 18's)
is replayed up to N times on a version, and is absent there only when every replay held."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from groupcheck.engines.releases import bisection
from groupcheck.engines.releases.bisection import VersionVerdict
from groupcheck.engines.releases.windows import ABSENT, NA, PRESENT


def _played(monkeypatch: pytest.MonkeyPatch, *verdicts: str) -> list[int]:
    """Replays that answer ``verdicts`` in turn; returns the count of replays made."""
    made = [0]
    answers: Iterator[str] = iter(verdicts)

    def replay_one(_made: object, _saved: object) -> VersionVerdict:
        made[0] += 1
        return VersionVerdict("v", next(answers), "I11 held")
    monkeypatch.setattr(bisection, "_replay_one", replay_one)
    return made


def test_a_story_that_shows_on_a_later_replay_is_present(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _played(monkeypatch, ABSENT, PRESENT, ABSENT)
    assert bisection._tried(object(), object(), 3).verdict == PRESENT
    assert made[0] == 2


def test_a_story_every_replay_held_is_absent_and_says_how_often(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = _played(monkeypatch, ABSENT, ABSENT, ABSENT)
    outcome = bisection._tried(object(), object(), 3)
    assert (outcome.verdict, outcome.text, made[0]) == (ABSENT, "I11 held (in 3 replays)", 3)


def test_one_try_and_a_story_that_cannot_play_replay_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = _played(monkeypatch, NA, NA)
    assert bisection._tried(object(), object(), 3).verdict == NA
    made = _played(monkeypatch, ABSENT, PRESENT)
    assert bisection._tried(object(), object(), 1).verdict == ABSENT
    assert made[0] == 1
