"""groupcheck's engines as a library: what ``groupcheck check``, ``diff``, ``fuzz``,
``prove``, ``replay``, ``shrink``, ``scenarios``, ``zoo`` and ``audit`` run, and what the
pytest plugin drives.

An engine takes resolved targets (or target strings and the caller's `Settings`), runs, and
returns results and the lines that tell them; it never parses arguments, prints or reads
the environment. Bad input is an `EngineInputError` with one line.

* the battery (`battery/`): ``codec``, ``prove``, ``vectors``, ``scenarios``, ``fuzz`` and
  ``scale`` on every assignor of a target within a budget — `run_batteries`, or one engine
  alone; ``prove`` and ``fuzz`` of one assignor;
* Kafka's releases side by side and bisection across them (`releases/`);
* rolling upgrades and their certification table (`upgrades/`);
* differential search (`differential/`);
* saved files played again and shrunk (`saved/`; the one reader of them is
  `model.saved_files`);
* at the top: the bug zoo (`zoo`), BMC and the compatibility matrix (`bmc`), the audit's job
  (`audit_job`), many clients on the broker (`many_clients`), and what every engine shares:
  target strings resolved, the audit's too (`resolving`), progress (`progress`), the one
  input error (`errors`).

The package costs nothing to import: each name loads its module on first use (PEP 562), so
the command line builds its parsers, and ``groupcheck jsonl`` serves, without the engines
(or Hypothesis, Z3 and Spark behind them) loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audit_job import audit_config, findings_lines, run_audit_job, shrink_timings
    from .battery.check_report import check_json, check_text
    from .battery.depth import shortfall
    from .battery.fuzz_one import fuzz_one
    from .battery.prove_one import large_scope_warning, prove_target
    from .battery.runner import (
        INVARIANT_ROWS,
        SCALE_SHARE,
        SCENARIOS_SHARE,
        SMALL_SCOPE,
        BatteryResult,
        EngineResult,
        Finding,
        figure_lines,
        run_batteries,
        run_battery,
        run_codec,
        run_fuzz,
        run_prove,
        run_scale,
        run_stories,
        run_vectors,
    )
    from .battery.scenarios import run_scenarios_engine
    from .bmc import BmcOutcome, run_bmc, run_matrix
    from .differential.reports import (
        ASSIGNORS,
        diff_pairs,
        requests_lines,
        save_differences,
        save_search_difference,
        story_assignors,
        story_report,
    )
    from .differential.search import DiffResult, describe, run_diff
    from .differential.stories import StoriesResult
    from .differential.stories import run_stories as run_diff_stories
    from .errors import EngineInputError
    from .progress import ProgressFn, Tick, silent
    from .releases.bisection import Bisection, bisect_file, bisect_many, load_counterexample
    from .releases.matrix import MatrixRun, named_and_released, parse_versions, plan_cells
    from .releases.matrix import run_matrix as run_release_matrix
    from .releases.matrix_report import matrix_json, matrix_text, write_matrix
    from .releases.wire_stories import story_targets
    from .resolving import (
        References,
        check_scope,
        close_all,
        expand_targets,
        group_target,
        offers_of,
        parse_assignors,
        resolve_audit_target,
        resolved,
        started,
    )
    from .saved.files import (
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
    from .saved.stories import StoryReplay, replay_story, shrink_story_file, write_record
    from .upgrades.plan import parse_side
    from .upgrades.play import distinct
    from .upgrades.table import UpgradeTable, read_pairs, run_table, run_upgrade, table_text
    from .upgrades.table import write_table as write_upgrade_table
    from .zoo import ZooOutcome, run_zoo_entry, zoo_table

__all__ = ["ASSIGNORS", "BatteryResult", "Bisection", "BmcOutcome", "DiffResult",
           "EngineInputError", "EngineResult", "Finding", "INVARIANT_ROWS", "MatrixRun",
           "References", "Replayed", "SCALE_SHARE", "SCENARIOS_SHARE", "SMALL_SCOPE", "SavedFile",
           "SavedFileError", "StoriesResult", "StoryReplay", "ZooOutcome", "audit_config",
           "bisect_file", "bisect_many", "check_json", "check_scope", "check_text",
           "classify_saved", "close_all", "describe", "diff_pairs", "expand_targets",
           "figure_lines", "findings_lines", "fuzz_one", "group_target", "large_scope_warning",
           "load_counterexample", "matrix_json", "matrix_text", "named_and_released",
           "offers_of", "parse_assignors", "parse_versions", "plan_cells",
           "prove_target", "read_saved", "replay_events_file", "replay_requests_file",
           "replay_story", "requests_lines", "resolve_audit_target", "resolved", "run_audit_job",
           "run_batteries", "run_battery", "run_bmc", "run_codec", "run_diff", "run_diff_stories",
           "run_fuzz", "run_matrix", "run_prove", "run_release_matrix", "run_scale",
           "run_scenarios_engine",
           "run_stories", "run_vectors", "run_zoo_entry", "save_differences",
           "save_search_difference", "shrink_events_file", "shrink_requests_file",
           "shrink_story_file", "shrink_timings", "shortfall", "story_assignors", "story_report",
           "story_targets",
           "write_matrix", "write_record", "zoo_table", "UpgradeTable", "distinct", "parse_side",
           "read_pairs", "run_table", "run_upgrade", "table_text", "write_upgrade_table",
           "ProgressFn", "Tick", "silent", "started"]

#: public name → (module of this package, name in it)
_PUBLIC: dict[str, tuple[str, str]] = {
    "audit_config": ("audit_job", "audit_config"),
    "run_audit_job": ("audit_job", "run_audit_job"),
    "shrink_timings": ("audit_job", "shrink_timings"),
    "ASSIGNORS": ("differential.reports", "ASSIGNORS"),
    "Bisection": ("releases.bisection", "Bisection"),
    "bisect_file": ("releases.bisection", "bisect_file"),
    "bisect_many": ("releases.bisection", "bisect_many"),
    "load_counterexample": ("releases.bisection", "load_counterexample"),
    "story_targets": ("releases.wire_stories", "story_targets"),
    "MatrixRun": ("releases.matrix", "MatrixRun"),
    "matrix_json": ("releases.matrix_report", "matrix_json"),
    "matrix_text": ("releases.matrix_report", "matrix_text"),
    "named_and_released": ("releases.matrix", "named_and_released"),
    "parse_versions": ("releases.matrix", "parse_versions"),
    "plan_cells": ("releases.matrix", "plan_cells"),
    "run_release_matrix": ("releases.matrix", "run_matrix"),
    "write_matrix": ("releases.matrix_report", "write_matrix"),
    "BatteryResult": ("battery.runner", "BatteryResult"),
    "BmcOutcome": ("bmc", "BmcOutcome"),
    "DiffResult": ("differential.search", "DiffResult"),
    "EngineInputError": ("errors", "EngineInputError"),
    "EngineResult": ("battery.runner", "EngineResult"),
    "Finding": ("battery.runner", "Finding"),
    "INVARIANT_ROWS": ("battery.runner", "INVARIANT_ROWS"),
    "References": ("resolving", "References"),
    "Replayed": ("saved.files", "Replayed"),
    "SCALE_SHARE": ("battery.runner", "SCALE_SHARE"),
    "SCENARIOS_SHARE": ("battery.runner", "SCENARIOS_SHARE"),
    "SMALL_SCOPE": ("battery.runner", "SMALL_SCOPE"),
    "SavedFile": ("saved.files", "SavedFile"),
    "SavedFileError": ("saved.files", "SavedFileError"),
    "StoriesResult": ("differential.stories", "StoriesResult"),
    "StoryReplay": ("saved.stories", "StoryReplay"),
    "ZooOutcome": ("zoo", "ZooOutcome"),
    "check_json": ("battery.check_report", "check_json"),
    "check_scope": ("resolving", "check_scope"),
    "check_text": ("battery.check_report", "check_text"),
    "shortfall": ("battery.depth", "shortfall"),
    "classify_saved": ("saved.files", "classify_saved"),
    "close_all": ("resolving", "close_all"),
    "describe": ("differential.search", "describe"),
    "diff_pairs": ("differential.reports", "diff_pairs"),
    "expand_targets": ("resolving", "expand_targets"),
    "figure_lines": ("battery.runner", "figure_lines"),
    "findings_lines": ("audit_job", "findings_lines"),
    "fuzz_one": ("battery.fuzz_one", "fuzz_one"),
    "group_target": ("resolving", "group_target"),
    "large_scope_warning": ("battery.prove_one", "large_scope_warning"),
    "offers_of": ("resolving", "offers_of"),
    "parse_assignors": ("resolving", "parse_assignors"),
    "prove_target": ("battery.prove_one", "prove_target"),
    "read_saved": ("saved.files", "read_saved"),
    "replay_events_file": ("saved.files", "replay_events_file"),
    "replay_requests_file": ("saved.files", "replay_requests_file"),
    "replay_story": ("saved.stories", "replay_story"),
    "requests_lines": ("differential.reports", "requests_lines"),
    "resolve_audit_target": ("resolving", "resolve_audit_target"),
    "resolved": ("resolving", "resolved"),
    "started": ("resolving", "started"),
    "run_batteries": ("battery.runner", "run_batteries"),
    "run_battery": ("battery.runner", "run_battery"),
    "run_bmc": ("bmc", "run_bmc"),
    "run_codec": ("battery.runner", "run_codec"),
    "run_diff": ("differential.search", "run_diff"),
    "run_diff_stories": ("differential.stories", "run_stories"),
    "run_fuzz": ("battery.runner", "run_fuzz"),
    "run_matrix": ("bmc", "run_matrix"),
    "run_prove": ("battery.runner", "run_prove"),
    "run_scale": ("battery.runner", "run_scale"),
    "run_scenarios_engine": ("battery.scenarios", "run_scenarios_engine"),
    "run_stories": ("battery.runner", "run_stories"),
    "run_vectors": ("battery.runner", "run_vectors"),
    "run_zoo_entry": ("zoo", "run_zoo_entry"),
    "save_differences": ("differential.reports", "save_differences"),
    "save_search_difference": ("differential.reports", "save_search_difference"),
    "shrink_events_file": ("saved.files", "shrink_events_file"),
    "shrink_requests_file": ("saved.files", "shrink_requests_file"),
    "shrink_story_file": ("saved.stories", "shrink_story_file"),
    "story_assignors": ("differential.reports", "story_assignors"),
    "story_report": ("differential.reports", "story_report"),
    "write_record": ("saved.stories", "write_record"),
    "zoo_table": ("zoo", "zoo_table"),
    "UpgradeTable": ("upgrades.table", "UpgradeTable"),
    "parse_side": ("upgrades.plan", "parse_side"),
    "distinct": ("upgrades.play", "distinct"),
    "read_pairs": ("upgrades.table", "read_pairs"),
    "run_table": ("upgrades.table", "run_table"),
    "run_upgrade": ("upgrades.table", "run_upgrade"),
    "table_text": ("upgrades.table", "table_text"),
    "write_upgrade_table": ("upgrades.table", "write_table"),
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
