"""Labels from evidence: a violation the reference reproduces is the reference's own.

Theory of operation. A rule of ``properties/kafka_rules.py`` labels a violation Kafka's
own by reasoning about its shape. With a reference target (``--reference java:``, Kafka's
own client) the audit asks instead: the requests of the rebalance that showed the violation,
from its first call up to the one where the violation showed, are sent to the reference as
they were sent to the target, and when every answer is identical (list for list: members,
partitions, order, user data, generation and protocol, or the same exception, or no answer
within the time limit on both) the reference *reproduces* the violation, which is then
labelled ``ref`` ("inherited from <reference>") whatever the rules say. When the reference
answers one of those requests otherwise, the violation is the target's own: the evidence
contradicts a rule that would excuse it, so no rule label is kept. Earlier rebalances do
not matter: each request carries the whole state (subscriptions, owned partitions,
generations), and a story goes on from the target's answers, so an earlier difference (a
deviation D1-D4, say) changes what is asked, never whether the reference reproduces what
it is asked. Rules
still label what the reference was not asked about: a violation the reference's process
broke before reaching (no evidence either way) and the codec check (I10), which is no
``assign`` request.

The reference runs the target's own assignor: `targets.reference_name` turns ``java:[CLASSPATH]``
into ``<assignor>@java:[CLASSPATH]`` and ``builtin:`` into ``builtin:<assignor>``; any
other target string is used as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..properties.deviations import EVIDENCE, agreement, evidence_labels
from .call_timeout import call_with_timeout
from .chain import ChainResult
from .summary_shapes import LabelEntry
from .targets import AuditTarget, assignor_of, reference_name

__all__ = ["evidence_note", "label", "label_entry", "label_text"]

#: what the codec check judges: not an ``assign`` answer, so never asked of the reference
_NOT_ASKED = frozenset({"I10"})


def label(result: ChainResult, target: AuditTarget, reference: AuditTarget,
          timeout: float) -> None:
    """Relabel ``result``'s violations from the reference's evidence (module docstring):
    the calls of the rebalance that showed each, from its first to the violating one, go
    to both, each bounded by ``timeout``."""
    def bounded(fn: Any) -> Any:
        return lambda request: call_with_timeout(fn, request, timeout)

    asked: dict[tuple[int, int], tuple[int, bool]] = {}
    for inv, v in list(result.verdicts.items()):
        if v != 1 or inv in _NOT_ASKED or not result.rounds:
            continue
        at = min(result.violated_at.get(inv, len(result.rounds) - 1), len(result.rounds) - 1)
        start = at - int(result.rounds[at].get("follow_up", 0))
        if (start, at) not in asked:
            requests = [r["request"] for r in result.rounds[start:at + 1]]
            asked[start, at] = agreement(requests, bounded(target.assign),
                                         bounded(reference.assign))
        evidence_labels({inv: at - start}, result.inherited, *asked[start, at])


def label_entry(label_id: str, reference: str | None, target: str) -> LabelEntry:
    """What a summary says of a label: ``{"label": "rule", "rule": "K1"}``, or
    ``{"label": "evidence", "reference": "<assignor>@java:"}``."""
    if label_id != EVIDENCE:
        return {"label": "rule", "rule": label_id}
    shown = reference_name(reference, assignor_of(target)) if reference else "the reference"
    return {"label": "evidence", "reference": shown}


def label_text(entry: Mapping[str, Any]) -> str:
    """`` (K1)`` or `` (inherited from sticky@java:, which reproduced it)`` (empty for an
    entry without a label)."""
    if entry.get("label") == "evidence":
        return f" (inherited from {entry['reference']}, which reproduced it)"
    return f" ({entry['rule']})" if "rule" in entry else ""


def evidence_note(summary: Mapping[str, Any]) -> str:
    """One sentence on where the labels came from."""
    reference = summary.get("reference")
    if not reference:
        return ("no --reference was given, so every label here comes from a rule "
                f"({summary.get('inherited_by_rule', 0):,} violations).")
    return (f"with --reference {reference}, {summary.get('inherited_by_evidence', 0):,} "
            "violations were reproduced by the reference (the same requests, identical "
            f"answers) and {summary.get('inherited_by_rule', 0):,} labelled by a rule where "
            "the reference was not asked (its process failed, or the codec check I10); a "
            "violation the reference answered otherwise is the target's own.")
