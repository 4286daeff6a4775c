"""The one table of invariants (properties/invariants.py): the reference page's tables are
generated from it and checked, pages that name a count or range of the invariants agree
with it, and what each engine's code judges stays within the table's column."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.audit.chain import INVARIANTS as AUDIT_COLUMNS
from groupcheck.cli import invariants_reference as reference
from groupcheck.engines.battery.fuzz import FUZZ_CHECKED, WIRE_CHECKED
from groupcheck.engines.battery.golden import run_codec
from groupcheck.engines.battery.prove import prover_checked
from groupcheck.engines.battery.results import INVARIANT_ROWS, invariant_id
from groupcheck.engines.battery.runner import run_stories
from groupcheck.model.bmc import INVARIANTS as BMC_INVARIANTS
from groupcheck.properties.invariants import (
    INVARIANTS,
    JUDGES,
    NUMBERED,
    ROWS,
    by_id,
    judged_by,
)
from groupcheck.targets.registry import resolve

from helpers import ROOT

BUILTINS = ("range", "roundrobin", "sticky", "cooperative-sticky")


def test_the_committed_invariants_page_holds_the_tables_the_table_gives() -> None:
    assert reference.stale((ROOT / reference.PAGE).read_text(encoding="utf-8")) == []


def test_a_wrong_cell_on_the_invariants_page_is_stale_and_regenerating_fixes_it() -> None:
    committed = (ROOT / reference.PAGE).read_text(encoding="utf-8")
    wrong = committed.replace("| I13 | | | | | | | | | | | ✓ |", "| I13 | ✓ | | | | | | | | | | |")
    assert wrong != committed
    assert reference.stale(wrong) == ["engines"]
    assert reference.page(wrong) == committed
    renamed = committed.replace("| exclusive ownership |", "| sole ownership |")
    assert reference.stale(renamed) == ["summary"]
    assert reference.stale(committed.replace("<!-- END generated: summary -->", "")) \
        == ["summary"]


def test_miscounts_catch_an_old_count_or_range_and_let_a_part_or_other_numbers_be() -> None:
    assert len(NUMBERED) == 17
    assert reference.miscounts("the sixteen invariants; I1–I16 and I1 to I18") == [
        "sixteen invariants", "I1–I16", "I1 to I18"]
    assert reference.miscounts("seventeen in all, I1–I17; I1–I6 in one rebalance; I1 to "
                               "I11 on the wire; Twelve partitions over four members") == []


@pytest.mark.parametrize("page", [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_names_a_count_or_range_of_the_invariants_that_is_not_theirs(
        page: Path) -> None:
    assert reference.miscounts(page.read_text(encoding="utf-8")) == []


def test_the_code_s_lists_of_invariants_are_the_table_s() -> None:
    assert INVARIANT_ROWS == ROWS == tuple(i.row for i in INVARIANTS)
    assert FUZZ_CHECKED == tuple(r for r in judged_by("fuzz") if r != "TIMEOUT")
    assert WIRE_CHECKED == judged_by("wire")
    assert tuple(by_id(c).row for c in AUDIT_COLUMNS) == judged_by("audit")
    assert BMC_INVARIANTS == judged_by("bmc")
    assert {j.key for j in JUDGES} == {k for i in INVARIANTS for k in i.judges}
    assert invariant_id("I4a: 1 partition(s) moved") == "I4a"
    assert invariant_id("I13: one assign call took 400 s") == "I13"
    assert invariant_id("no id here") == "ERROR"
    with pytest.raises(ValueError, match="no engine"):
        judged_by("prover")


@pytest.mark.parametrize("assignor", BUILTINS)
def test_what_the_prover_and_the_codec_engine_judge_is_in_their_columns(
        assignor: str, tmp_path: Path) -> None:
    target = resolve(f"builtin:{assignor}")
    timed = replace(target, timeout=10.0)
    assert set(prover_checked(target)) <= set(judged_by("prove", timed=False))
    assert set(prover_checked(timed)) <= set(judged_by("prove"))
    assert "TIMEOUT" in prover_checked(timed)
    codec = run_codec(target, str(tmp_path))
    assert set(codec.checked) <= set(judged_by("codec"))
    assert codec.checked and not codec.failed


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_what_the_scenarios_engine_judges_is_in_its_column(assignor: str,
                                                           tmp_path: Path) -> None:
    result = run_stories(resolve(f"builtin:{assignor}"), 0.5, str(tmp_path))
    assert result.runs and not result.failed
    assert set(result.checked) <= set(judged_by("scenarios"))
    assert set(result.judged) <= set(judged_by("scenarios"))
