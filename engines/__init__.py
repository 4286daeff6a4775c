"""groupcheck's engines as a library: what ``groupcheck check``, ``diff``, ``fuzz``,
``prove``, ``replay``, ``shrink``, ``scenarios``, ``zoo`` and ``audit`` run, and what the
pytest plugin drives.

An engine takes resolved targets (or target strings and the caller's `Settings`), runs, and
returns results and the lines that tell them; it never parses arguments, prints or reads
the environment. Bad input is an `EngineInputError` with one line.

* the battery (`battery`): ``codec``, ``prove``, ``vectors``, ``scenarios`` and ``fuzz``
  on every assignor of a target within a budget — `run_batteries`, or one engine alone;
* differential search (`differential`, `differential_stories`, `diff_runs`);
* saved files played again and shrunk (`story_runs`, `saved_runs`; the one reader of them
  is `model.saved_files`);
* the bug zoo (`zoo_run`), BMC and the compatibility matrix (`bmc_runs`), the audit's
  targets (`audit_targets`).

The package costs nothing to import: each name loads its module on first use (PEP 562), so
the command line builds its parsers, and ``groupcheck jsonl`` serves, without the engines
(or Hypothesis, Z3 and Spark behind them) loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audit_run import audit_config, run_audit_job, shrink_timings
    from .audit_targets import expand_targets, findings_lines, resolve_audit_target
    from .battery import (
        INVARIANT_ROWS,
        SCENARIOS_SHARE,
        SMALL_SCOPE,
        BatteryResult,
        EngineResult,
        Finding,
        run_batteries,
        run_battery,
        run_codec,
        run_fuzz,
        run_prove,
        run_stories,
        run_vectors,
    )
    from .bisect_run import Bisection, bisect_file, bisect_many
    from .bmc_runs import BmcOutcome, run_bmc, run_matrix
    from .check_report import check_json, check_text
    from .diff_runs import (
        ASSIGNORS,
        diff_pairs,
        requests_lines,
        save_differences,
        save_search_difference,
        story_assignors,
        story_report,
    )
    from .differential import DiffResult, describe, run_diff
    from .differential_stories import StoriesResult
    from .differential_stories import run_stories as run_diff_stories
    from .errors import EngineInputError
    from .fuzz_run import fuzz_one
    from .matrix_report import matrix_json, matrix_text, write_matrix
    from .matrix_run import MatrixRun, parse_versions, plan_cells
    from .matrix_run import run_matrix as run_release_matrix
    from .progress import ProgressFn, Tick, silent
    from .prove_run import large_scope_warning, prove_target
    from .resolving import (
        References,
        check_scope,
        close_all,
        group_target,
        offers_of,
        parse_assignors,
        resolved,
        started,
    )
    from .saved_runs import (
        Replayed,
        SavedFile,
        SavedFileError,
        classify_saved,
        read_saved,
        replay_events_file,
        replay_requests_file,
        shrink_events_file,
        shrink_requests_file,
    )
    from .scenario_engine import run_scenarios_engine
    from .story_runs import StoryReplay, replay_story, shrink_story_file, write_record
    from .upgrade_plan import parse_side
    from .upgrade_run import distinct
    from .upgrade_table import UpgradeTable, read_pairs, run_table, run_upgrade, table_text
    from .upgrade_table import write_table as write_upgrade_table
    from .zoo_run import ZooOutcome, run_zoo_entry, zoo_table

__all__ = ["ASSIGNORS", "BatteryResult", "Bisection", "BmcOutcome", "DiffResult",
           "EngineInputError", "EngineResult", "Finding", "INVARIANT_ROWS", "MatrixRun",
           "References", "Replayed", "SCENARIOS_SHARE", "SMALL_SCOPE", "SavedFile",
           "SavedFileError", "StoriesResult", "StoryReplay", "ZooOutcome", "audit_config",
           "bisect_file", "bisect_many", "check_json", "check_scope", "check_text",
           "classify_saved", "close_all", "describe", "diff_pairs", "expand_targets",
           "findings_lines", "fuzz_one", "group_target", "large_scope_warning", "matrix_json",
           "matrix_text", "offers_of", "parse_assignors", "parse_versions", "plan_cells",
           "prove_target", "read_saved", "replay_events_file", "replay_requests_file",
           "replay_story", "requests_lines", "resolve_audit_target", "resolved", "run_audit_job",
           "run_batteries", "run_battery", "run_bmc", "run_codec", "run_diff", "run_diff_stories",
           "run_fuzz", "run_matrix", "run_prove", "run_release_matrix", "run_scenarios_engine",
           "run_stories", "run_vectors", "run_zoo_entry", "save_differences",
           "save_search_difference", "shrink_events_file", "shrink_requests_file",
           "shrink_story_file", "shrink_timings", "story_assignors", "story_report",
           "write_matrix", "write_record", "zoo_table", "UpgradeTable", "distinct", "parse_side",
           "read_pairs", "run_table", "run_upgrade", "table_text", "write_upgrade_table",
           "ProgressFn", "Tick", "silent", "started"]

#: public name → (module of this package, name in it)
_PUBLIC: dict[str, tuple[str, str]] = {
    "audit_config": ("audit_run", "audit_config"),
    "run_audit_job": ("audit_run", "run_audit_job"),
    "shrink_timings": ("audit_run", "shrink_timings"),
    "ASSIGNORS": ("diff_runs", "ASSIGNORS"),
    "Bisection": ("bisect_run", "Bisection"),
    "bisect_file": ("bisect_run", "bisect_file"),
    "bisect_many": ("bisect_run", "bisect_many"),
    "MatrixRun": ("matrix_run", "MatrixRun"),
    "matrix_json": ("matrix_report", "matrix_json"),
    "matrix_text": ("matrix_report", "matrix_text"),
    "parse_versions": ("matrix_run", "parse_versions"),
    "plan_cells": ("matrix_run", "plan_cells"),
    "run_release_matrix": ("matrix_run", "run_matrix"),
    "write_matrix": ("matrix_report", "write_matrix"),
    "BatteryResult": ("battery", "BatteryResult"),
    "BmcOutcome": ("bmc_runs", "BmcOutcome"),
    "DiffResult": ("differential", "DiffResult"),
    "EngineInputError": ("errors", "EngineInputError"),
    "EngineResult": ("battery", "EngineResult"),
    "Finding": ("battery", "Finding"),
    "INVARIANT_ROWS": ("battery", "INVARIANT_ROWS"),
    "References": ("resolving", "References"),
    "Replayed": ("saved_runs", "Replayed"),
    "SCENARIOS_SHARE": ("battery", "SCENARIOS_SHARE"),
    "SMALL_SCOPE": ("battery", "SMALL_SCOPE"),
    "SavedFile": ("saved_runs", "SavedFile"),
    "SavedFileError": ("saved_runs", "SavedFileError"),
    "StoriesResult": ("differential_stories", "StoriesResult"),
    "StoryReplay": ("story_runs", "StoryReplay"),
    "ZooOutcome": ("zoo_run", "ZooOutcome"),
    "check_json": ("check_report", "check_json"),
    "check_scope": ("resolving", "check_scope"),
    "check_text": ("check_report", "check_text"),
    "classify_saved": ("saved_runs", "classify_saved"),
    "close_all": ("resolving", "close_all"),
    "describe": ("differential", "describe"),
    "diff_pairs": ("diff_runs", "diff_pairs"),
    "expand_targets": ("audit_targets", "expand_targets"),
    "findings_lines": ("audit_targets", "findings_lines"),
    "fuzz_one": ("fuzz_run", "fuzz_one"),
    "group_target": ("resolving", "group_target"),
    "large_scope_warning": ("prove_run", "large_scope_warning"),
    "offers_of": ("resolving", "offers_of"),
    "parse_assignors": ("resolving", "parse_assignors"),
    "prove_target": ("prove_run", "prove_target"),
    "read_saved": ("saved_runs", "read_saved"),
    "replay_events_file": ("saved_runs", "replay_events_file"),
    "replay_requests_file": ("saved_runs", "replay_requests_file"),
    "replay_story": ("story_runs", "replay_story"),
    "requests_lines": ("diff_runs", "requests_lines"),
    "resolve_audit_target": ("audit_targets", "resolve_audit_target"),
    "resolved": ("resolving", "resolved"),
    "started": ("resolving", "started"),
    "run_batteries": ("battery", "run_batteries"),
    "run_battery": ("battery", "run_battery"),
    "run_bmc": ("bmc_runs", "run_bmc"),
    "run_codec": ("battery", "run_codec"),
    "run_diff": ("differential", "run_diff"),
    "run_diff_stories": ("differential_stories", "run_stories"),
    "run_fuzz": ("battery", "run_fuzz"),
    "run_matrix": ("bmc_runs", "run_matrix"),
    "run_prove": ("battery", "run_prove"),
    "run_scenarios_engine": ("scenario_engine", "run_scenarios_engine"),
    "run_stories": ("battery", "run_stories"),
    "run_vectors": ("battery", "run_vectors"),
    "run_zoo_entry": ("zoo_run", "run_zoo_entry"),
    "save_differences": ("diff_runs", "save_differences"),
    "save_search_difference": ("diff_runs", "save_search_difference"),
    "shrink_events_file": ("saved_runs", "shrink_events_file"),
    "shrink_requests_file": ("saved_runs", "shrink_requests_file"),
    "shrink_story_file": ("story_runs", "shrink_story_file"),
    "story_assignors": ("diff_runs", "story_assignors"),
    "story_report": ("diff_runs", "story_report"),
    "write_record": ("story_runs", "write_record"),
    "zoo_table": ("zoo_run", "zoo_table"),
    "UpgradeTable": ("upgrade_table", "UpgradeTable"),
    "parse_side": ("upgrade_plan", "parse_side"),
    "distinct": ("upgrade_run", "distinct"),
    "read_pairs": ("upgrade_table", "read_pairs"),
    "run_table": ("upgrade_table", "run_table"),
    "run_upgrade": ("upgrade_table", "run_upgrade"),
    "table_text": ("upgrade_table", "table_text"),
    "write_upgrade_table": ("upgrade_table", "write_table"),
    "ProgressFn": ("progress", "ProgressFn"),
    "Tick": ("progress", "Tick"),
    "silent": ("progress", "silent"),
}


def __getattr__(name: str) -> Any:
    """Load the module that defines ``name`` and keep what it gives (PEP 562)."""
    try:
        module, attr = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
