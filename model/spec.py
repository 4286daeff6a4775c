"""The reference model of a consumer group: what a correct group may do.

It tracks, per member, what the harness told it (subscription, assignor list, profile,
codec versions, pause marks) and, for the group, the topic metadata. It never computes an
assignment: after every step it reads the target's `GroupView` and asks `properties/`
whether what the target did is allowed. Each check returns violations as sentences that
start with the invariant id (I1 … I11).

Theory of operation: `observe(view)` is called after every event and every protocol step.
What the target's assignors promise (a balance contract per assignor, stickiness) comes in
`Promises`; how often each invariant was judged, the figures and the violations labelled
as Kafka's own go to an optional `Stats` (`model/promises`, `model/stats`).
Safety invariants (I1, I5, I6, I7, I8 for records) hold at every step — for a target that
logs when each callback starts and ends (the wire), I5 is also judged on the recorded
ownership intervals: a partition's next owner starts its assign callback only after the
previous owner's revoke or lost callback has ended; state invariants
(I2, I3 under the assignor's balance contract, I17 on a wire target's cumulative delivery
log) are judged only when the target reports the group settled; each leader run is judged
on I4a (when its premise holds) and I12; pause marks (I8) are judged when a member completes
a rebalance (its generation changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..properties import assignment as A
from ..properties import generations as G
from ..properties import membership as M
from ..properties.balance import imbalance, judge_balance
from ..properties.delivery import judge_delivery
from ..properties.group import (
    CallbackRecord,
    GroupView,
    MemberSpec,
    MemberView,
    RebalanceRecord,
    TopicPartition,
)
from ..properties.member_id_rules import left_behind, member_id_after_error
from ..properties.raised_rules import raised_to_application
from .promises import Promises, judge_i4a, judge_i12
from .stats import Stats

__all__ = ["MemberModel", "ReferenceModel"]

#: answers that tell a member its membership is gone (Kafka's clients then report lost)
FENCING_ERRORS = frozenset({"ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"})
#: errors after which a member gives its member id up (the coordinator keeps it until its
#: session runs out)
ID_DROPPING_ERRORS = frozenset({"UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"})


@dataclass
class MemberModel:
    spec: MemberSpec
    subscription: frozenset[str]
    pause_marks: set[TopicPartition] = field(default_factory=set)
    completed_joins: int = 0
    consumed: set[TopicPartition] = field(default_factory=set)  # owned, records returned


@dataclass
class ReferenceModel:
    """What the harness knows a correct group must respect."""

    partitions: dict[str, int] = field(default_factory=dict)
    members: dict[str, MemberModel] = field(default_factory=dict)
    assignor: str | None = None  # the strategy of the last rebalance
    last_view: GroupView | None = None  # what the target showed after the last step
    crashed: list[MemberSpec] = field(default_factory=list)  # may linger until they expire
    released: dict[TopicPartition, tuple[str, int]] = field(default_factory=dict)  # by, seq
    holders: dict[TopicPartition, str] = field(default_factory=dict)  # open intervals
    reported: list[tuple[str, str]] = field(default_factory=list)  # errors members saw
    promises: Promises = field(default_factory=Promises)
    stats: Stats | None = None
    labelled: list[str] = field(default_factory=list)  # Kafka's own, until the caller reads
    #: the last settled generation and its ownership (for moves between settled states)
    settled_at: tuple[int, dict[str, frozenset[TopicPartition]]] | None = None
    #: members an injected answer told they are fenced, with the generation of the request
    #: it answered (None: assumed at injection, for a target that does not tell when it
    #: lands), until an assign callback of a later generation (any, for None)
    told_fenced: dict[str, int | None] = field(default_factory=dict)
    #: injected error answers since the last settle: each may cost the group one rebalance
    injected_errors: int = 0
    #: member ids abandoned without a LeaveGroup since the last settle (a crash, an id a
    #: member drops after an error answer): each holds the group up to a session timeout
    abandoned: int = 0
    #: answers the coordinator was told to delay since the last settle: (API, ms)
    delayed: list[tuple[str, int]] = field(default_factory=list)
    #: the members' client sends generations (`MachineConfig.generations`); when it does
    #: not, a claim without one is what that release sends, not an I6 breach
    generations: bool = True
    #: I17 breaches already reported (`DeliveryViolation.key`): the delivery log is
    #: cumulative, each breach is reported once
    delivered: set[tuple[str, str, str, int, int]] = field(default_factory=set)

    # --- events the harness applied -------------------------------------------------------

    def joined(self, name: str, spec: MemberSpec) -> None:
        self.members[name] = MemberModel(spec, frozenset(spec.topics))

    def left(self, name: str) -> None:
        self.members.pop(name, None)
        self._drop_holds(name)

    def _drop_holds(self, name: str) -> None:
        self.holders = {tp: h for tp, h in self.holders.items() if h != name}

    def crashed_member(self, name: str) -> None:
        self._drop_holds(name)
        member = self.members.pop(name, None)
        if member is not None:
            self.crashed.append(member.spec)
            self.abandoned += 1

    def subscribed(self, name: str, topics: tuple[str, ...]) -> None:
        self.members[name].subscription = frozenset(topics)

    def unsubscribed(self, name: str) -> None:
        """KIP-70: the assignment is cleared, and with it every pause mark and position."""
        member = self.members[name]
        member.subscription = frozenset()
        member.pause_marks.clear()
        member.consumed.clear()

    def paused(self, name: str, partitions: tuple[TopicPartition, ...]) -> None:
        """``pause`` marks only partitions the member owns (Kafka raises for the others)."""
        seen = self.last_view.members.get(name) if self.last_view else None
        owned = seen.owned if seen else frozenset()
        self.members[name].pause_marks |= set(partitions) & owned

    def resumed(self, name: str, partitions: tuple[TopicPartition, ...]) -> None:
        self.members[name].pause_marks -= set(partitions)

    def error_answered(self, members: set[str], error: str, lands_later: bool = False) -> None:
        """The coordinator answers these members with ``error`` (an injected error reaches
        one member, or on a backend that cannot aim, any member); ``lands_later``: the
        target tells when it lands (`GroupView.told`), and the member is fenced from then."""
        self.injected_errors += 1
        self.abandoned += error in ID_DROPPING_ERRORS
        if error in FENCING_ERRORS and not lands_later:
            self.told_fenced.update(dict.fromkeys(members))

    def _told(self, view: GroupView) -> None:
        for member, error, generation in view.told:
            if error in FENCING_ERRORS:
                self.told_fenced[member] = generation

    def metadata(self, topic: str, count: int | None) -> None:
        if count is None:
            self.partitions.pop(topic, None)
        else:
            self.partitions[topic] = count

    def _cluster_topics(self, view: GroupView) -> None:
        """A topic a member subscribes to that the cluster has beyond what the story made is
        metadata from then on: a member's Metadata request created it (Kafka's
        ``auto.create.topics.enable``, on by default, for a client that allows it, KIP-361).
        Other topics of the cluster (other groups' on a shared broker) are not the group's."""
        wanted = {t for m in self.members.values() for t in m.subscription}
        for topic, count in view.partitions.items():
            if topic in wanted and count > self.partitions.get(topic, 0):
                self.partitions[topic] = count
                self.reported.append(("cluster", f"{topic} has {count} partition(s), made at "
                                                 "a client's Metadata request"))

    # --- judging --------------------------------------------------------------------------

    def judge(self, invariant: str, times: int = 1) -> None:
        if self.stats is not None and times:
            self.stats.judge(invariant, times)

    def observe(self, view: GroupView) -> list[str]:
        """All violations visible in this view (those labelled as Kafka's own behaviour go
        to ``labelled`` instead)."""
        self.last_view = view
        self.reported += view.errors
        self._cluster_topics(view)
        for name, verb, partitions in view.pause_calls:
            if name in self.members:
                (self.paused if verb == "pause" else self.resumed)(name, partitions)
        out = self._exclusive(view)
        for record in view.rebalances:
            out += self._rebalance(record)
        self.judge("I7", len(view.callbacks))
        self.judge("I9", len(view.subscribe_calls))
        self.judge("I8", len(view.records))
        self._told(view)
        self.judge("I15", len(view.raised))
        out += raised_to_application(view.raised) + self._rejoins(view)
        for cb in view.callbacks:
            profile = self._profile(view, cb.member)
            out += [f"{cb.member}: {v}" for v in M.listener_call(
                cb.kind, set(cb.partitions), set(cb.owned_before), cb.generation,
                cb.member_id, profile, cb.rebalancing, cb.member in self.told_fenced)]
            told = self.told_fenced.get(cb.member, cb.generation)
            if cb.kind == "assigned" and (told is None or cb.generation > told):
                self.told_fenced.pop(cb.member, None)
            out += self._handover(cb)
        for call in view.subscribe_calls:
            out += [f"{call.member}: {v}" for v in M.subscription_change(call.before,
                                                                         call.after)]
        for name, tp in view.records:
            mv = view.members.get(name)
            if mv is not None:
                out += [f"{name}: {v}" for v in M.fetched_record(tp, mv.owned, mv.paused)]
                if name in self.members:
                    self.members[name].consumed.add(tp)
        for name, member in self.members.items():
            seen = view.members.get(name)
            member.consumed &= set(seen.owned) if seen else set()
        for name, mv in view.members.items():
            out += [f"{name}: {v}" for v in self._pauses(name, mv)]
        if view.settled:
            out += self._settled(view) + self._delivery(view)
        return out

    def _delivery(self, view: GroupView) -> list[str]:
        """I17 on a settled view's cumulative delivery log (targets that keep one); a
        breach is reported once, at the first view that shows it."""
        if view.delivery is None:
            return []
        self.judge("I17")
        found = [v for v in judge_delivery(view.delivery).violations
                 if v.key not in self.delivered]
        self.delivered.update(v.key for v in found)
        return [v.sentence for v in found]

    def story_ended(self) -> list[str]:
        """I17 on the last view when the story ended before its group settled: records
        already handed twice, skipped or committed backwards stay so whether or not it ever
        settles (what is lost is judged only on a caught-up log, `DeliveryLog.caught_up`).
        A settled last view was judged when it was seen."""
        view = self.last_view
        if view is None or view.settled:
            return []
        return self._delivery(view)

    def _rejoins(self, view: GroupView) -> list[str]:
        """I16 for each error answer and the member's next JoinGroup; a member id left
        behind is reported as the group's (`left_behind`), not a violation."""
        self.judge("I16", len(view.rejoins))
        out: list[str] = []
        for answer, join in view.rejoins:
            named = self._profile(view, answer.member)
            profile = M.PROFILE_TABLE.get(named, M.PROFILE_TABLE["kip"])
            out += member_id_after_error(answer, join, profile)
            if said := left_behind(answer, join):
                self.reported.append(("group", said))
        return out

    def _profile(self, view: GroupView, name: str) -> str:
        """The profile a member is judged by: the one its target reports (a wire member
        follows its own client's, whatever the join event said), else the join's."""
        shown = view.members.get(name)
        member = self.members.get(name)
        if shown is not None and shown.profile:
            return shown.profile
        return member.spec.profile if member else "kip"

    def _handover(self, cb: CallbackRecord) -> list[str]:
        """I1 and I5 on ownership intervals (targets that log both ends of a callback): an
        interval runs from the end of an assign callback to the end of the revoke or lost
        callback; no two members' intervals of a partition overlap (I1), and the taker's
        assign callback began after the previous owner's release had ended (KIP-429)."""
        if cb.started < 0:
            return []
        if cb.kind in ("revoked", "lost"):
            for tp in cb.partitions:
                self.released[tp] = (cb.member, cb.seq)
                if self.holders.get(tp) == cb.member:
                    del self.holders[tp]
            return []
        out = []
        for tp in cb.partitions:
            name = f"{tp[0]}-{tp[1]}"
            holder = self.holders.get(tp)
            if holder is not None and holder != cb.member and holder in self.members:
                out.append(f"I1: {name} went to {cb.member} (#{cb.seq}) while {holder} still "
                           "owned it (no revoke or lost callback yet)")
            by, seq = self.released.get(tp, (cb.member, -1))
            if holder is None and by != cb.member and seq > cb.started:
                out.append(f"I5: {cb.member}'s assign of {name} began (#{cb.started}) before "
                           f"{by} had released it (#{seq})")
            self.holders[tp] = cb.member
        return out

    def _exclusive(self, view: GroupView) -> list[str]:
        """I1 among the members the coordinator currently lists."""
        live = {n: m.owned for n, m in view.members.items() if m.in_group}
        self.judge("I1")
        return A.exclusive_ownership(live)

    def _rebalance(self, record: RebalanceRecord) -> list[str]:
        self.assignor = record.assignor
        out: list[str] = []
        subs = {m: c.topics for m, c in record.claims.items()}
        out += [f"gen {record.generation}: {v}" for v in A.exclusive_ownership(record.assignment)]
        out += [f"gen {record.generation}: {v}" for v in
                A.valid_targets(record.assignment, subs, self.partitions)]
        self.judge("I1")
        self.judge("I2")
        if record.protocol == "COOPERATIVE":
            self.judge("I5")
            out += [f"gen {record.generation}: {v}" for v in
                    A.revoke_before_reassign(record.owned, record.assignment)]
        if (record.protocol == "COOPERATIVE" or record.observed) and self.generations:
            for m, c in record.claims.items():
                if m in record.generationless:
                    continue
                self.judge("I6", bool(c.owned))
                if c.generation < 0 and c.owned:
                    out.append(f"gen {record.generation}: I6: {m} claims {len(c.owned)} "
                               "partition(s) with no generation")
        if record.observed:
            self.judge("I10")
            # a release that sends no generation claims what it last owned (KIP-792):
            # its claims cannot be told fresh from stale, so I6 does not judge them
            out += [f"gen {record.generation}: {v}" for v in G.claims_match_given(
                {m: c.owned for m, c in record.claims.items()
                 if self.generations and m not in record.generationless}, record.given)]
            out += [f"gen {record.generation}: I10: {u}" for u in record.unreadable]
        found, labelled = judge_i4a(record, self.partitions, self.promises, self.stats)
        out += found
        self.labelled += labelled
        if self.stats is not None:
            for text in labelled:
                self.stats.label(text.split(": ", 1)[1])
        specs = {n: m.spec for n, m in self.members.items()}
        out += judge_i12(record, specs, self.stats)
        return out

    def _pauses(self, name: str, mv: MemberView) -> list[str]:
        """I8: when the member adopts an assignment its marks follow its profile; at any
        other moment it has no mark nobody set, and none on a partition it does not own."""
        member = self.members.get(name)
        if member is None:
            return []
        profile = mv.profile or member.spec.profile
        if profile == "java":  # a mark lives in the partition's state: it goes
            member.pause_marks &= set(mv.owned)  # as soon as the partition leaves the member
        if mv.completed_joins != member.completed_joins:
            self.judge("I8")
            member.completed_joins = mv.completed_joins
            member.pause_marks = M.pause_marks(profile, mv.protocol,
                                               member.pause_marks, mv.joined_owned)
            return M.pause_state(set(mv.paused), set(mv.owned), member.pause_marks)
        problems = [] if mv.paused <= mv.owned else M.pause_state(
            set(mv.paused), set(mv.owned), member.pause_marks)
        extra = set(mv.paused) - member.pause_marks
        if extra:
            shown = ", ".join(f"{t}-{p}" for t, p in sorted(extra))
            problems.append(f"I8: [{shown}] are paused although nobody paused them")
        return problems

    def _settled(self, view: GroupView) -> list[str]:
        """I2, and I3 under the balance contract of the last rebalance's assignor, once the
        group has settled; figures for each settled generation."""
        live = {n: m for n, m in view.members.items() if m.in_group}
        owned = {n: m.owned for n, m in live.items()}
        subs = {n: self.members[n].subscription for n in live if n in self.members}
        self.judge("I2")
        out = A.complete(owned, subs, self.partitions)
        contract = self.promises.contract(self.assignor) if self.assignor else "none"
        if contract != "none":
            self.judge("I3")
            out += judge_balance(contract, owned, subs, self.partitions)
        if not out:
            self._figures(view.generation, owned, subs, contract == "sticky")
        return out

    def _figures(self, generation: int, owned: dict[str, frozenset[TopicPartition]],
                 subs: dict[str, frozenset[str]], balanced: bool) -> None:
        """Imbalance, moves since the last settled generation and, where the assignment
        is held to Kafka's isBalanced (the optimum's own rule), an I4b input; once per
        settled generation."""
        if self.stats is None or (self.settled_at and self.settled_at[0] == generation):
            return
        self.stats.imbalance[imbalance(owned, subs)] += 1
        if len(set(subs.values())) == 1:
            self.stats.equal_groups[len(subs)] += 1
        if self.settled_at is not None:
            previous = self.settled_at[1]
            moves = A.moves(previous, owned)
            self.stats.moves[moves] += 1
            if balanced:
                self.stats.gap_input(subs, dict(self.partitions), previous, moves)
        self.settled_at = (generation, owned)
