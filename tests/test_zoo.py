"""The bug zoo: every mutant is caught by its engine within its budget, on the invariant
the bug breaks, while the same check passes the unmutated builtin; and the zoo command."""

from __future__ import annotations

import pytest

from groupcheck.engines import EngineInputError as CommandError
from groupcheck.engines.zoo import run_zoo_entry, zoo_table
from groupcheck.targets.registry import group_target_factory, machine_hints, resolve
from groupcheck.targets.zoo.entries import ASSIGNOR_MUTANTS, CODEC_MUTANTS, PEER_ZOO, ZOO

from helpers.command_line import run_command
from helpers.vectors import required_vectors, vectors_dir

REQUIRED_ROWS = {"1", "2", "7", "9", "10b", "11", "12", "13", "14", "22", "24", "A.2-1"}


def test_the_zoo_covers_the_required_rows() -> None:
    assert {e.row for e in ZOO} >= REQUIRED_ROWS


#: rows whose catch takes half a minute or more (tests/test_depth_mutants.py checks the cost
#: row on a smaller ladder, tests/test_machine_stickiness.py the A.3-fg mutant on the state
#: machine; row 22's, half a minute of scenarios, is tox -e heavy's like them)
HEAVY_ROWS = {"A.3-fg", "cost", "22"}
#: rows today's engines do not catch yet (strict: such a row fails once it is caught)
NOT_YET: dict[str, str] = {}


def _marks(row: str) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.heavy] if row in HEAVY_ROWS else []
    if row in NOT_YET:
        marks.append(pytest.mark.xfail(reason=NOT_YET[row], strict=True))
    return marks


@pytest.mark.parametrize("entry", [pytest.param(e, marks=_marks(e.row)) for e in ZOO],
                         ids=[f"{e.row}-{e.target}" for e in ZOO])
def test_mutant_is_caught_and_the_builtin_passes(entry, tmp_path) -> None:
    vectors = required_vectors() if entry.engine == "vectors" else vectors_dir()
    outcome = run_zoo_entry(entry, str(tmp_path), vectors=vectors)
    assert outcome.caught is not None, f"{entry.target} escaped {entry.engine}"
    assert outcome.caught.invariant == entry.invariant, outcome.caught.violation
    assert outcome.control == "passed", outcome.control
    assert outcome.caught.file is not None and (tmp_path / outcome.caught.file).exists()


@pytest.mark.parametrize("entry", PEER_ZOO, ids=[e.target for e in PEER_ZOO])
def test_the_real_peer_shows_the_same_bug(entry, tmp_path) -> None:
    pytest.importorskip("kafka")
    outcome = run_zoo_entry(entry, str(tmp_path), control=False)
    assert outcome.caught is not None and outcome.caught.invariant == entry.invariant


def test_every_mutant_resolves_with_the_engines_it_needs() -> None:
    for name, mutant in ASSIGNOR_MUTANTS.items():
        target = resolve(f"mutant:{name}")
        assert target.assign is not None and target.group is not None
        assert target.assignor == mutant.assignor
    for name in CODEC_MUTANTS:
        target = resolve(f"mutant:{name}")
        assert target.codec is not None and target.assign is None
    # the first three mutants keep their names and hints
    assert machine_hints("mutant:sticky-user-data-v0").user_data_versions == (0,)
    assert group_target_factory("mutant:pause-dropper")().name == "mutant:pause-dropper"
    assert machine_hints("mutant:cooperative-last-writer").subscription_versions == (1,)


def test_zoo_command_prints_the_table(tmp_path, capsys) -> None:
    assert run_command(["zoo", "--row", "2", "--row", "13", "--failures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "KAFKA-12984" in out and "KAFKA-10647" in out and "2/2 mutants caught" in out
    with pytest.raises(CommandError):
        run_command(["zoo", "--row", "nope"])


def test_an_escaped_mutant_is_reported() -> None:
    from groupcheck.engines.zoo import ZooOutcome

    table = zoo_table([ZooOutcome("x", "BUG-1", "mutant:m", "scenario", "I1", None, 0.1, 1.0,
                                  "passed")])
    assert "ESCAPED" in table and "0/1" in table
