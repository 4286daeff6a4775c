"""The exhaustive-scope prover: every configuration in a small scope, run through an assign
function it is given, and judged (I1–I6, I11, the I4b gap).

* `space` — the scope's bounds, a configuration, the assign function's type;
* `orbits` — the classes of configurations under symmetry and their weights;
* `enumeration` — the units of work and every configuration of a scope;
* `judgement` — one configuration turned into requests and judged; `reading` — one answer
  read once per leader run;
* `blind` — claims a leader never sees, judged once per projection (``--no-gaps``);
* `report` — what a proof reports; `prover` — the run over the whole scope on worker
  processes.

The names below are the prover's public ones, importable from this package.
"""

from __future__ import annotations

from .enumeration import enumerate_scope, upper_bound
from .judgement import build_request, judge
from .prover import claim_mode, prove, save_counterexample, violation_shape
from .report import FORMAT, Counterexample, ProofReport
from .space import AssignFn, Config, Scope, parse_bounds

__all__ = ["FORMAT", "AssignFn", "Config", "Counterexample", "ProofReport", "Scope",
           "build_request", "claim_mode", "enumerate_scope", "judge", "parse_bounds", "prove",
           "save_counterexample", "upper_bound", "violation_shape"]
