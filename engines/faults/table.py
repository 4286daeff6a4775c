"""The state machine's fault table for a target: the errors its injected answers may carry,
per API.

What lives here: `FULL_TABLE` (every API a consumer sends, with the coordinator's errors
from broker/faults.py) and `fault_table` (the one a target can play).

Theory of operation: an injected error must be one the target can play and one the model
can judge. groupcheck's broker (a wire target with steering) answers any API with any error
of its fault table, and a wire group is judged by the invariants, not by a prediction of
the member's reaction: it takes the whole table, less the errors an API carries only from
some version on (a member that speaks an older version would have the rule refused, or not
applied, mid-story). The mock cluster injects three errors on JoinGroup, SyncGroup and
Heartbeat alone, and the in-process targets answer SyncGroup and Heartbeat alone, with the
errors the reference model predicts: both keep the machine's default table.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...broker.faults import FAULTS, carried
from ...broker.protocol import SUPPORTED
from ...broker.steering import api_key_of
from ...model.machine_config import ERRORS
from ...targets.target import Target
from .points import APIS

__all__ = ["FULL_TABLE", "fault_table"]


def _carried_always(api: str) -> tuple[str, ...]:
    """The API's errors its response carries at every version the broker serves, in table
    order, each once."""
    key = api_key_of(api)
    lowest = SUPPORTED[key][1]
    out: list[str] = []
    for fault in FAULTS:
        if fault.api == api and fault.error not in out and carried(key, fault.code, lowest):
            out.append(fault.error)
    return tuple(out)


#: every API a consumer sends, in the order it first sends them, with its errors
FULL_TABLE: Mapping[str, tuple[str, ...]] = {api: _carried_always(api) for api in APIS}


def fault_table(target: Target) -> Mapping[str, tuple[str, ...]]:
    """The table of the errors ``target`` can play and the model can judge."""
    hints = target.hints
    if hints is not None and hints.wire and hints.steering:
        return dict(FULL_TABLE)
    return dict(ERRORS)
