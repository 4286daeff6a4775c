"""A bisection's windows over present / absent / n/a sequences: the maximal runs, a present
run after an absence named a regression, n/a splitting runs without counting as an absence;
and the same windows in `Bisection`'s summary and JSON beside first seen / gone."""

from __future__ import annotations

from groupcheck.engines.releases.bisection import Bisection, VersionVerdict
from groupcheck.engines.releases.windows import ABSENT, NA, PRESENT, windows, windows_text

RELEASES = ["2.8.0", "3.0.0", "3.2.0", "3.4.0", "3.5.1", "4.0.0-SNAPSHOT"]


def _spans(verdicts: list[str]) -> list[tuple[str, str, str, bool]]:
    found = windows(list(zip(RELEASES, verdicts, strict=False)))
    return [(w.verdict, w.first, w.last, w.regression) for w in found]


def test_present_then_absent_then_back_is_a_regression() -> None:
    verdicts = [PRESENT, ABSENT, ABSENT, ABSENT, PRESENT, PRESENT]
    assert _spans(verdicts) == [(PRESENT, "2.8.0", "2.8.0", False),
                                (ABSENT, "3.0.0", "3.4.0", False),
                                (PRESENT, "3.5.1", "4.0.0-SNAPSHOT", True)]
    assert windows_text(windows(list(zip(RELEASES, verdicts, strict=True)))) == (
        "present 2.8.0; absent 3.0.0–3.4.0; back in 3.5.1–4.0.0-SNAPSHOT (regression)")


def test_introduced_then_fixed_is_no_regression() -> None:
    assert _spans([ABSENT, PRESENT, PRESENT, ABSENT, ABSENT, ABSENT]) == [
        (ABSENT, "2.8.0", "2.8.0", False), (PRESENT, "3.0.0", "3.2.0", False),
        (ABSENT, "3.4.0", "4.0.0-SNAPSHOT", False)]


def test_na_in_the_middle_splits_windows_but_is_not_an_absence() -> None:
    assert _spans([PRESENT, PRESENT, NA, PRESENT, ABSENT, ABSENT]) == [
        (PRESENT, "2.8.0", "3.0.0", False), (NA, "3.2.0", "3.2.0", False),
        (PRESENT, "3.4.0", "3.4.0", False), (ABSENT, "3.5.1", "4.0.0-SNAPSHOT", False)]


def test_absence_across_an_na_still_makes_the_return_a_regression() -> None:
    assert _spans([PRESENT, ABSENT, NA, PRESENT]) == [
        (PRESENT, "2.8.0", "2.8.0", False), (ABSENT, "3.0.0", "3.0.0", False),
        (NA, "3.2.0", "3.2.0", False), (PRESENT, "3.4.0", "3.4.0", True)]


def test_every_version_one_verdict_is_one_window_and_none_is_empty() -> None:
    assert _spans([ABSENT] * 6) == [(ABSENT, "2.8.0", "4.0.0-SNAPSHOT", False)]
    assert windows([]) == [] and windows_text([]) == "none"


def test_bisection_reports_windows_and_keeps_first_seen_and_gone() -> None:
    verdicts = [PRESENT, ABSENT, ABSENT, ABSENT, PRESENT, PRESENT]
    b = Bisection("f.json", "I2", [VersionVerdict(f"java@{v}:", verdict)
                                   for v, verdict in zip(RELEASES, verdicts, strict=True)])
    assert b.regression
    assert b.first_seen == "java@2.8.0:" and b.gone_in is None
    assert b.summary() == ("present java@2.8.0:; absent java@3.0.0:–java@3.4.0:; back in "
                           "java@3.5.1:–java@4.0.0-SNAPSHOT: (regression); first seen in "
                           "java@2.8.0:; gone in none")
    body = b.to_json()
    assert body["firstSeenIn"] == "java@2.8.0:" and body["goneIn"] is None
    assert body["regression"] is True
    assert [(w["verdict"], w["first"], w["last"], w["regression"]) for w in body["windows"]] \
        == [(PRESENT, "java@2.8.0:", "java@2.8.0:", False),
            (ABSENT, "java@3.0.0:", "java@3.4.0:", False),
            (PRESENT, "java@3.5.1:", "java@4.0.0-SNAPSHOT:", True)]
    assert body["windows"][1]["targets"] == ["java@3.0.0:", "java@3.2.0:", "java@3.4.0:"]
