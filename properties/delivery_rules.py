"""The rules of I17, one function each, over a `DeliveryLog` and its `LogIndex` (each
record placed in the tenure it was handed in, accepted commits in time order).

A record handed at ``ts`` belongs to its member's tenure of the partition covering ``ts``;
one outside every tenure of its member (I1's business) is left out of the tenure rules but
counts as handed for "lost". A commit is charged to a tenure that covers its ``ts`` or ends
exactly then: a commit made inside a revoke callback is answered before the tenure ends.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .delivery_log import (
    Commit,
    DeliveryLog,
    DeliveryViolation,
    DuplicateWindow,
    Handed,
    Tenure,
    TopicPartition,
)

__all__ = ["LogIndex", "auto_commit_revoke", "commit_backwards", "commit_unowned",
           "duplicate_violations", "duplicates", "index_log", "lost", "runs", "skipped",
           "span", "starts"]


@dataclass(frozen=True)
class LogIndex:
    """A log arranged for the rules: each partition's tenures by start, the records each
    tenure was handed in order, and the accepted commits by time."""

    by_partition: dict[TopicPartition, list[Tenure]]
    handed_in: dict[Tenure, list[Handed]]
    accepted: list[Commit]


#: a time past every entry of a log (monotonic nanoseconds)
_LATEST = 2**63


def index_log(log: DeliveryLog) -> LogIndex:
    """Place each record in its tenure and sort tenures and accepted commits."""
    by_partition: dict[TopicPartition, list[Tenure]] = defaultdict(list)
    by_owner: dict[tuple[str, TopicPartition], list[Tenure]] = defaultdict(list)
    for tenure in log.tenures:
        by_partition[tenure.tp].append(tenure)
        by_owner[(tenure.member, tenure.tp)].append(tenure)
    handed_in: dict[Tenure, list[Handed]] = {t: [] for t in log.tenures}
    for record in sorted(log.handed, key=lambda h: h.ts):
        owned = by_owner.get((record.member, (record.topic, record.partition)), [])
        for tenure in owned:
            if tenure.covers(record.ts):
                handed_in[tenure].append(record)
                break
    for tenures in by_partition.values():
        tenures.sort(key=lambda t: t.start)
    accepted = sorted((c for c in log.commits if c.accepted), key=lambda c: c.ts)
    return LogIndex(dict(by_partition), handed_in, accepted)


def runs(offsets: Iterable[int]) -> list[list[int]]:
    """Offsets in runs of consecutive ones, ascending."""
    out: list[list[int]] = []
    for offset in sorted(set(offsets)):
        if out and offset == out[-1][-1] + 1:
            out[-1].append(offset)
        else:
            out.append([offset])
    return out


def span(offsets: Iterable[int]) -> str:
    """Offsets as runs: ``3–5, 8``."""
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs(offsets))


def _name(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _violation(rule: str, member: str, tp: TopicPartition, offsets: Iterable[int],
               message: str) -> DeliveryViolation:
    return DeliveryViolation(rule, member, tp[0], tp[1], tuple(offsets), message)


def _committed(index: LogIndex, tp: TopicPartition, ts: int,
               member: str | None = None) -> int | None:
    """The partition's last accepted committed offset at ``ts`` (by ``member`` if given)."""
    last = None
    for commit in index.accepted:
        if commit.ts > ts:
            break
        if member is None or commit.member == member:
            for topic, partition, offset in commit.offsets:
                if (topic, partition) == tp:
                    last = offset
    return last


def lost(log: DeliveryLog, index: LogIndex) -> list[DeliveryViolation]:
    """Once caught up, every offset from the log start to the high watermark of every
    owned partition was handed to some member."""
    if not log.caught_up:
        return []
    handed: dict[TopicPartition, set[int]] = defaultdict(set)
    for record in log.handed:
        handed[(record.topic, record.partition)].add(record.offset)
    out = []
    for tp in sorted(index.by_partition):
        watermark = log.high_watermarks.get(tp)
        if watermark is None:
            continue
        owner = _owner(index.by_partition[tp])
        missing = [o for o in range(log.start_of(tp), watermark) if o not in handed[tp]]
        for gap in runs(missing):
            out.append(_violation("lost", owner, tp, gap, (
                f"{_name(tp)} (owned by {owner}) has offsets {span(gap)} below its "
                f"high watermark {watermark} that no member was ever handed")))
    return out


def _owner(tenures: Sequence[Tenure]) -> str:
    """The member that owns the partition now (else the last that did)."""
    current = [t for t in tenures if t.end is None]
    return (current or list(tenures))[-1].member


def skipped(index: LogIndex) -> list[DeliveryViolation]:
    """Within one tenure a member's offsets run without a gap from the first it was
    handed (a violation per gap)."""
    out = []
    for tenure, records in index.handed_in.items():
        if not records:
            continue
        offsets = {r.offset for r in records}
        first = records[0].offset
        for gap in runs(set(range(first, max(offsets) + 1)) - offsets):
            out.append(_violation("skipped", tenure.member, tenure.tp, gap, (
                f"{tenure.member} was handed {_name(tenure.tp)} {gap[-1] + 1} after "
                f"{gap[0] - 1} in one tenure, never {span(gap)}")))
    return out


def starts(log: DeliveryLog, index: LogIndex) -> list[DeliveryViolation]:
    """A tenure's first record is the partition's committed offset at its start (the log
    start when none): later loses records, unless this member was handed every one in
    between before; earlier rewinds."""
    out = []
    for tenure, records in index.handed_in.items():
        if not records:
            continue
        committed = _committed(index, tenure.tp, tenure.start)
        expected = log.start_of(tenure.tp) if committed is None else committed
        first = records[0].offset
        said = "committed offset" if committed is not None else "log start"
        if first > expected:
            before = {h.offset for h in log.handed if h.member == tenure.member
                      and (h.topic, h.partition) == tenure.tp and h.ts < tenure.start}
            gap = [o for o in range(expected, first) if o not in before]
            if gap:
                out.append(_violation("start-later", tenure.member, tenure.tp, gap, (
                    f"{tenure.member} started {_name(tenure.tp)} at {first}, past the "
                    f"{said} {expected}: {span(gap)} never handed to it")))
        elif first < expected:
            out.append(_violation("start-earlier", tenure.member, tenure.tp,
                                  range(first, expected), (
                f"{tenure.member} started {_name(tenure.tp)} at {first}, before the "
                f"{said} {expected}")))
    return out


def duplicates(log: DeliveryLog, index: LogIndex) -> list[DuplicateWindow]:
    """Each run of records handed again in a later tenure of their partition, split where
    the previous owner's last commit falls: at or above it the window is allowed."""
    out: list[DuplicateWindow] = []
    for _, tenures in sorted(index.by_partition.items()):
        seen: set[int] = set()
        for i, tenure in enumerate(tenures):
            offsets = [r.offset for r in index.handed_in[tenure]]
            again = sorted({o for o in offsets if o in seen})
            if again and i > 0:
                previous = tenures[i - 1]
                bound, own = _handover_commit(log, index, previous, tenure.start)
                out += _windows(previous, tenure, again, bound, own,
                                log.styles.get(previous.member))
            seen.update(offsets)
    return out


def _handover_commit(log: DeliveryLog, index: LogIndex, previous: Tenure,
                     taken: int) -> tuple[int, bool]:
    """What the previous owner had committed when its tenure ended (the partition's
    committed offset then, or the log start, when it committed nothing itself), and whether
    it was its own commit."""
    ended = taken if previous.end is None else previous.end
    own = _committed(index, previous.tp, ended, previous.member)
    if own is not None:
        return own, True
    committed = _committed(index, previous.tp, ended)
    return (log.start_of(previous.tp) if committed is None else committed), False


def _windows(previous: Tenure, tenure: Tenure, again: list[int], bound: int, own: bool,
             style: str | None) -> list[DuplicateWindow]:
    """The runs of consecutive re-delivered offsets, cut at ``bound``."""
    runs: list[list[int]] = []
    for offset in again:
        if runs and offset == runs[-1][-1] + 1 and (offset >= bound) == (runs[-1][0] >= bound):
            runs[-1].append(offset)
        else:
            runs.append([offset])
    return [DuplicateWindow(previous.member, tenure.member, tenure.topic, tenure.partition,
                            run[0], run[-1], style, run[0] >= bound, own) for run in runs]


def duplicate_violations(windows: Iterable[DuplicateWindow]) -> list[DeliveryViolation]:
    """A violation for each window below the previous owner's commit."""
    return [_violation("duplicate", w.member, (w.topic, w.partition),
                       range(w.first, w.last + 1), (
        f"{w.member} was handed {w.topic}-{w.partition} {span(range(w.first, w.last + 1))} "
        f"again after {w.previous}, " + ("which had committed past them" if w.own_commit else
                                          "when the partition's committed offset was past them")))
            for w in windows if not w.allowed]


def commit_unowned(log: DeliveryLog) -> list[DeliveryViolation]:
    """An accepted commit names only partitions its member owned at the generation it sent:
    a tenure covering the commit, or one from the generation it was assigned in to the one
    it was revoked in (the coordinator accepts a generation's commit only while it is
    current, so before any later owner starts: a client that commits early in its assign
    callback, or at its unassign after its revoke callback returned, is within it)."""
    out = []
    for commit in sorted(log.commits, key=lambda c: c.ts):
        if not commit.accepted:
            continue
        for topic, partition, offset in commit.offsets:
            if not any(_holds(t, commit, (topic, partition)) for t in log.tenures):
                out.append(_violation("commit-unowned", commit.member, (topic, partition),
                                      (offset,), (
                    f"{commit.member} committed {topic}-{partition} at {offset} "
                    f"(generation {commit.generation}, {commit.style or 'style unknown'}) "
                    f"while it did not own it")))
    return out


def _holds(tenure: Tenure, commit: Commit, tp: TopicPartition) -> bool:
    """``tenure`` is the committer's of ``tp`` and covers the commit (or ends just then),
    or spans the generation the commit was sent at."""
    return (tenure.member == commit.member and tenure.tp == tp
            and (tenure.covers(commit.ts) or tenure.end == commit.ts
                 or _spans(tenure, commit.generation)))


def _spans(tenure: Tenure, generation: int) -> bool:
    """``generation`` is from the one ``tenure`` was assigned in to the one it was revoked
    in (a revoke in a later generation: cooperative's, KIP-429)."""
    if tenure.generation is None:
        return False
    last = tenure.generation if tenure.last_generation is None else tenure.last_generation
    return tenure.generation <= generation <= last


def commit_backwards(index: LogIndex) -> list[DeliveryViolation]:
    """A partition's accepted committed offset never goes down."""
    last: dict[TopicPartition, int] = {}
    out = []
    for commit in index.accepted:
        for topic, partition, offset in commit.offsets:
            tp = (topic, partition)
            if tp in last and offset < last[tp]:
                out.append(_violation("commit-backwards", commit.member, tp,
                                      (last[tp], offset), (
                    f"{commit.member} committed {_name(tp)} back from {last[tp]} to "
                    f"{offset}")))
            last[tp] = offset
    return out


def _next_tenure_start(index: LogIndex, tenure: Tenure) -> int | None:
    """When the partition's next tenure begins after ``tenure`` ends: another member's, or
    the same member's own when it is handed the partition back (an eager member gives up
    everything at each rebalance, and its new tenure starts from the committed offset)."""
    assert tenure.end is not None
    later = [t.start for t in index.by_partition.get(tenure.tp, ())
             if t is not tenure and t.start >= tenure.end]
    return min(later) if later else None


def auto_commit_revoke(log: DeliveryLog, index: LogIndex) -> list[DeliveryViolation]:
    """A member with auto-commit on has committed everything it was handed in a tenure by
    the time the partition's next tenure starts, its own next one included (the clients
    commit as they revoke: Java and kafka-python before the callback, librdkafka at the
    unassign after it; the next tenure starts from it). A tenure lost or ended by a crash
    is not judged; one nobody took over is judged at the end of the log."""
    out = []
    for tenure, records in index.handed_in.items():
        if (tenure.end is None or not tenure.revoked or not records
                or log.styles.get(tenure.member) != "auto"):
            continue
        handed = max(r.offset for r in records)
        deadline = _next_tenure_start(index, tenure)
        committed = _committed(index, tenure.tp,
                               deadline if deadline is not None else _LATEST, tenure.member)
        if committed is None or committed <= handed:
            since = max(records[0].offset, -1 if committed is None else committed)
            out.append(_violation("auto-commit-revoke", tenure.member, tenure.tp,
                                  range(since, handed + 1), (
                f"{tenure.member} (auto-commit) gave {_name(tenure.tp)} up having been "
                f"handed up to {handed} but committed "
                f"{'nothing' if committed is None else committed}")))
    return out
