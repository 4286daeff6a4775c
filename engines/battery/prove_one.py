"""``groupcheck prove``'s run of one assignor: the exhaustive-scope prover
(`properties.scope.prover.prove`) on a target's assign function, with a reference target where one
is given, held only to what the assignor promises."""

from __future__ import annotations

from ...properties.scope.enumeration import upper_bound
from ...properties.scope.prover import claim_mode, prove
from ...properties.scope.report import ProofReport
from ...properties.scope.space import Scope
from ...targets.target import Target
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from .results import note_profile

__all__ = ["LARGE_SCOPE", "large_scope_warning", "prove_target"]

#: candidate configurations past which a run warns before it starts
LARGE_SCOPE = 10_000_000


def large_scope_warning(scope: Scope, target: Target, gaps: bool) -> str | None:
    """One line when the run will enumerate a scope too big to wait for, else None."""
    bound = upper_bound(scope)
    if bound <= LARGE_SCOPE or claim_mode(scope, str(target.assignor), gaps,
                                          target.assign_session, target.balanced)[0]:
        return None
    return (f"prove: scope {scope.text()} visits up to {bound:,} candidate configurations "
            f"for {target.name}; consider fewer members, generations or claims")


def prove_target(target: Target, scope: Scope, *, reference: Target | None,
                 workers: int | None, failures: str, exact: bool, gaps: bool,
                 progress: ProgressFn = silent) -> ProofReport:
    """Every configuration of ``scope`` through ``target`` (``reference``: asked the
    requests of its violations), ``progress`` told of each unit of work. An assignor that
    promises no stickiness is not held to I4a: its I4a entries are dropped from the
    report."""
    if target.assign is None or target.assignor is None:
        raise EngineInputError(f"prove: {target.name} has no assign function for the scope "
                               "prover; its bugs show in groupcheck fuzz (or prove --bmc for "
                               "codec mixes)")
    fork_safe = target.fork_safe and (reference is None or reference.fork_safe)
    meter = Meter(progress, "prove", f"{target.name} [{target.assignor}]")
    report = prove(target.assign, target.assignor, scope, target=target.name,
                   workers=workers if fork_safe else 1, failures=failures, exact=exact,
                   sticky=target.balanced, session=target.assign_session,
                   progress=lambda configs, _, found: meter.tick(configs, found, scope.text()),
                   reference=reference.assign if reference is not None else None,
                   reference_name=reference.name if reference is not None else None,
                   gaps=gaps)
    if not target.sticky:
        for table in (report.violations, report.inherited, report.counterexamples):
            table.pop("I4a", None)
    if target.profile is not None:
        for cex in [*report.counterexamples.values(), *report.distinct]:
            if cex.file:
                note_profile(cex.file, target.profile.to_json())
    return report
