"""Z3 encodings of the one-rebalance invariants (I1, I2, I3, I4a, I5, I6) and of ``moves``.

Each invariant has two readings that must agree: the Python predicate (``assignment``,
``generations``) and the formula built here. Both are judged on the same plain data.

**Symbolic assignment.** A :class:`SymbolicAssignment` has one cell per member × partition
of a finite universe. With ``copies=1`` a cell is a Bool (the member holds the partition or
not); with ``copies=k > 1`` it is an Int in ``0..k``, the number of times the member's list
names the partition, so that a concrete assignment that names a partition twice for one
member (an I1 violation the predicate reports) is representable too. Cells that are known to
be empty (``allowed`` said no) are the constant 0, which keeps search formulas small.

**Reading.** Every ``*_holds`` function returns a Z3 Boolean that is true exactly when the
invariant holds (the positive reading). Hence: pinned to a concrete assignment
(:meth:`SymbolicAssignment.pin`), the formula is satisfiable iff the predicate returns no
violation; left free, ``Not(formula)`` searches for a counterexample and ``formula`` constrains
a search (the optimal-stickiness solver uses ``complete_holds`` ∧ ``balanced_holds``).
Subscriptions, metadata, previous ownership and claims are concrete and folded into the
formula; only the assignment is symbolic.

z3 is imported lazily (the ``z3`` extra): importing this module needs only the stdlib.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from .generations import Claims, claimants

__all__ = ["AssignmentMap", "Pinned", "SymbolicAssignment", "TopicPartition", "balanced_holds",
           "claim_hygiene_holds", "complete_holds", "exclusive_holds", "find", "holds",
           "moves_term", "no_moves_holds", "revoke_before_reassign_holds", "valid_targets_holds",
           "z3mod"]

TopicPartition = tuple[str, int]
AssignmentMap = Mapping[str, Iterable[TopicPartition]]


@cache
def z3mod() -> Any:
    """The z3 module, imported on first use (install the ``z3`` extra for it)."""
    return importlib.import_module("z3")


@cache
def _constant(label: str, boolean: bool) -> Any:
    """A named Bool or Int constant; z3 identifies constants by name, so reusing the Python
    object for a name is the same term and saves building it again."""
    z3 = z3mod()
    return z3.Bool(label) if boolean else z3.Int(label)


def _tp(item: TopicPartition) -> TopicPartition:
    return (item[0], item[1])


def _copies_of(assignment: AssignmentMap) -> dict[tuple[str, TopicPartition], int]:
    """How many times each member holds each partition in ``assignment``."""
    wanted: dict[tuple[str, TopicPartition], int] = {}
    for m, ps in assignment.items():
        for tp in ps:
            key = (m, _tp(tp))
            wanted[key] = wanted.get(key, 0) + 1
    return wanted


class SymbolicAssignment:
    """One symbolic cell per (member, partition) of a finite universe (see the module doc).

    ``members`` is ordered: ``moves`` follows the predicate, where a partition named by
    several members counts as held by the last of them in this order (the order of the
    assignment's keys, which :meth:`over` puts first).
    """

    def __init__(self, members: Sequence[str], partitions: Sequence[TopicPartition], *,
                 copies: int = 1, allowed: Callable[[str, TopicPartition], bool] | None = None,
                 name: str = "x") -> None:
        self.members = list(dict.fromkeys(members))
        self.partitions = list(dict.fromkeys(_tp(tp) for tp in partitions))
        self.copies = copies
        self._index = set(self.partitions)
        self._cells: dict[tuple[str, TopicPartition], Any] = {}
        self._memo: dict[Any, Any] = {}
        for i, m in enumerate(self.members):
            for tp in self.partitions:
                if allowed is not None and not allowed(m, tp):
                    continue
                label = f"{name}!{i}!{tp[0]}!{tp[1]}"
                self._cells[m, tp] = _constant(label, copies == 1)

    @classmethod
    def over(cls, assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]],
             partitions: Mapping[str, int], *others: AssignmentMap,
             claims: Claims | None = None) -> SymbolicAssignment:
        """A universe big enough to pin ``assignment``: its members first (in order), then the
        subscribers — exactly the members the predicates weigh (a member named only by
        ``others`` or ``claims`` holds nothing, and the encodings treat it so); every metadata
        partition and every partition any of them names. Int cells with enough copies for
        duplicates (at least 2, so that a free search can find a doubled entry)."""
        members = list(assignment) + list(subscriptions)
        parts = [(t, p) for t, n in partitions.items() for p in range(n)]
        copies = 1
        for source in (assignment, *others):
            for ps in source.values():
                listed = [_tp(tp) for tp in ps]
                parts += listed
                for tp in set(listed):
                    copies = max(copies, listed.count(tp))
        if claims is not None:
            for owned, _ in claims.values():
                parts += [_tp(tp) for tp in owned]
        return cls(members, parts, copies=max(copies, 2))

    def has(self, tp: TopicPartition) -> bool:
        return tp in self._index

    def may_hold(self, member: str, tp: TopicPartition) -> bool:
        """False when the cell is the constant 0 (not in the universe, or not allowed)."""
        return (member, tp) in self._cells

    def _memoised(self, key: Any, build: Callable[[], Any]) -> Any:
        term = self._memo.get(key)
        if term is None:
            term = self._memo[key] = build()
        return term

    def count(self, member: str, tp: TopicPartition) -> Any:
        """How many times ``member`` holds ``tp`` (an Int term; 0 for an empty cell)."""
        z3 = z3mod()
        cell = self._cells.get((member, tp))
        if cell is None:
            return self._memoised("zero", lambda: z3.IntVal(0))
        if self.copies > 1:
            return cell
        return self._memoised(("count", member, tp), lambda: z3.If(cell, 1, 0))

    def held(self, member: str, tp: TopicPartition) -> Any:
        """``member`` holds ``tp`` at least once (a Bool term)."""
        z3 = z3mod()
        cell = self._cells.get((member, tp))
        if cell is None:
            return self._memoised("false", lambda: z3.BoolVal(False))
        if self.copies == 1:
            return cell
        return self._memoised(("held", member, tp), lambda: cell >= 1)

    def holders(self, tp: TopicPartition) -> Any:
        """How many times ``tp`` is held in all (Int term)."""
        return self._memoised(("holders", tp), lambda: _sum(
            [self.count(m, tp) for m in self.members if (m, tp) in self._cells]))

    def size(self, member: str) -> Any:
        """The length of ``member``'s list (Int term)."""
        return self._memoised(("size", member), lambda: _sum(
            [self.count(member, tp) for tp in self.partitions if (member, tp) in self._cells]))

    def domain(self) -> list[Any]:
        """Bounds of the Int cells (none for Bool cells)."""
        if self.copies == 1:
            return []
        return [c for cell in self._cells.values() for c in (cell >= 0, cell <= self.copies)]

    def pin(self, assignment: AssignmentMap) -> list[Any]:
        """Constraints that make every cell equal to the concrete ``assignment``."""
        z3 = z3mod()
        wanted = _copies_of(assignment)
        out: list[Any] = []
        for key, n in wanted.items():
            if key not in self._cells or n > self.copies:
                return [z3.BoolVal(False)]
        for key, cell in self._cells.items():
            n = wanted.get(key, 0)
            out.append((cell if n else z3.Not(cell)) if self.copies == 1 else cell == n)
        return out

    def substitution(self, assignment: AssignmentMap) -> list[tuple[Any, Any]] | None:
        """(cell, value) pairs that stand for the concrete ``assignment`` (None when the
        universe cannot represent it), for ``z3.substitute``."""
        z3 = z3mod()
        wanted = _copies_of(assignment)
        if any(key not in self._cells or n > self.copies for key, n in wanted.items()):
            return None
        if self.copies == 1:
            values = [z3.BoolVal(False), z3.BoolVal(True)]
        else:
            values = [z3.IntVal(n) for n in range(self.copies + 1)]
        return [(cell, values[wanted.get(key, 0)]) for key, cell in self._cells.items()]

    def value(self, model: Any) -> dict[str, list[TopicPartition]]:
        """The concrete assignment a model gives (members in universe order)."""
        z3 = z3mod()
        out: dict[str, list[TopicPartition]] = {m: [] for m in self.members}
        for (m, tp), cell in self._cells.items():
            v = model.eval(cell, model_completion=True)
            n = (1 if z3.is_true(v) else 0) if self.copies == 1 else v.as_long()
            out[m] += [tp] * n
        return out


def _sum(terms: list[Any]) -> Any:
    z3 = z3mod()
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _and(terms: list[Any]) -> Any:
    return z3mod().And(terms) if terms else z3mod().BoolVal(True)


def _or(terms: list[Any]) -> Any:
    return z3mod().Or(terms) if terms else z3mod().BoolVal(False)


def _valid_cell(member: str, tp: TopicPartition, subs: Mapping[str, set[str]],
                partitions: Mapping[str, int]) -> bool:
    count = partitions.get(tp[0])
    return count is not None and 0 <= tp[1] < count and tp[0] in subs.get(member, set())


def exclusive_holds(sym: SymbolicAssignment) -> Any:
    """I1: every partition is held at most once in all (twice by one member counts)."""
    return _and([sym.holders(tp) <= 1 for tp in sym.partitions])


def valid_targets_holds(sym: SymbolicAssignment, subscriptions: Mapping[str, Iterable[str]],
                        partitions: Mapping[str, int]) -> Any:
    """I2, validity half: a held partition is in the metadata and its holder subscribes."""
    z3 = z3mod()
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    return _and([z3.Not(sym.held(m, tp)) for m in sym.members for tp in sym.partitions
                 if sym.may_hold(m, tp) and not _valid_cell(m, tp, subs, partitions)])


def complete_holds(sym: SymbolicAssignment, subscriptions: Mapping[str, Iterable[str]],
                   partitions: Mapping[str, int]) -> Any:
    """I2: valid, exclusive, and every partition of a subscribed topic with metadata held."""
    z3 = z3mod()
    wanted = sorted({t for ts in subscriptions.values() for t in ts if t in partitions})
    cover = []
    for topic in wanted:
        for p in range(partitions[topic]):
            if not sym.has((topic, p)):
                return z3.BoolVal(False)
            cover.append(sym.holders((topic, p)) >= 1)
    return _and([valid_targets_holds(sym, subscriptions, partitions), exclusive_holds(sym),
                 *cover])


def balanced_holds(sym: SymbolicAssignment, subscriptions: Mapping[str, Iterable[str]],
                   partitions: Mapping[str, int]) -> Any:
    """I3, Kafka's ``isBalanced``: sizes differ by at most 1, or no subscriber could take a
    partition of its topics from a holder with at least 2 more than it holds."""
    z3 = z3mod()
    sizes = {m: sym.size(m) for m in sym.members}
    spread = _and([sizes[a] - sizes[b] <= 1 for a in sym.members for b in sym.members
                   if a != b])
    heavier: dict[tuple[str, str], Any] = {}
    could_take = []
    for member, topics in subscriptions.items():
        for topic in set(topics):
            for p in range(partitions.get(topic, 0)):
                tp = (topic, p)
                if not sym.has(tp):
                    continue
                for other in sym.members:
                    if other == member or not sym.may_hold(other, tp):
                        continue
                    pair = heavier.get((member, other))
                    if pair is None:
                        pair = heavier[member, other] = sizes[member] + 1 < sizes[other]
                    could_take.append(z3.And(sym.held(other, tp), pair))
    return z3.Or(spread, z3.Not(_or(could_take)))


def moves_term(sym: SymbolicAssignment, owned_before: AssignmentMap) -> Any:
    """``moves``: previously owned entries whose partition is not held by the same member
    (when several members hold it, the last one in ``sym.members`` order counts)."""
    z3 = z3mod()
    order = {m: i for i, m in enumerate(sym.members)}
    terms = []
    for member, parts in owned_before.items():
        for item in parts:
            tp = _tp(item)
            if member not in order or not sym.has(tp):
                terms.append(z3.IntVal(1))
                continue
            later = [z3.Not(sym.held(m, tp)) for m in sym.members[order[member] + 1:]
                     if sym.may_hold(m, tp)]
            terms.append(z3.If(z3.And(sym.held(member, tp), *later), 0, 1))
    return _sum(terms)


def no_moves_holds(sym: SymbolicAssignment, owned_before: AssignmentMap) -> Any:
    """I4a's conclusion (the precondition — a balanced valid previous assignment with
    unchanged membership — is concrete and checked by the caller, as for the predicate)."""
    return moves_term(sym, owned_before) == 0


def revoke_before_reassign_holds(sym: SymbolicAssignment, owned_before: AssignmentMap) -> Any:
    """I5: no member holds a partition that another member owned when the rebalance began."""
    z3 = z3mod()
    previous: dict[TopicPartition, set[str]] = {}
    for member, parts in owned_before.items():
        for item in parts:
            previous.setdefault(_tp(item), set()).add(member)
    return _and([z3.Not(sym.held(m, tp)) for tp, holders in previous.items() if sym.has(tp)
                 for m in sym.members if holders - {m} and sym.may_hold(m, tp)])


def claim_hygiene_holds(sym: SymbolicAssignment, claims: Claims, protocol: str) -> Any:
    """I6 for one rebalance (reading in ``generations``): COOPERATIVE, a contested partition
    is held only by a claimant whose generation is strictly above every other claim."""
    z3 = z3mod()
    if protocol != "COOPERATIVE":
        return z3.BoolVal(True)
    out = []
    for tp, who in claimants(claims).items():
        if len(who) < 2 or not sym.has(tp):
            continue
        for m in sym.members:
            mine = who.get(m)
            if not sym.may_hold(m, tp):
                continue
            if mine is None or any(g >= mine for o, g in who.items() if o != m):
                out.append(z3.Not(sym.held(m, tp)))
    return _and(out)


class Pinned:
    """A symbolic assignment fixed to one concrete assignment: every formula over it is then
    true or false, and :meth:`holds` reads which from the one model of the pinning, written
    down directly (judging many formulas on one assignment costs no solver call)."""

    def __init__(self, sym: SymbolicAssignment, assignment: AssignmentMap) -> None:
        z3 = z3mod()
        self.model: Any = None
        pairs = sym.substitution(assignment)
        if pairs is None:
            return  # the universe cannot hold it: nothing is satisfiable
        self.model = z3.Model()  # the pinning has exactly one model: write it down
        for cell, value in pairs:
            self.model.update_value(cell, value)

    def holds(self, formula: Any) -> bool:
        """Is ``formula`` satisfiable with the cells pinned (= true in the pinned model)?"""
        if self.model is None:
            return False
        return bool(z3mod().is_true(self.model.eval(formula, model_completion=True)))


def holds(formula: Any, sym: SymbolicAssignment, assignment: AssignmentMap) -> bool:
    """Is ``formula`` satisfiable with ``sym`` pinned to the concrete ``assignment``?

    Every cell is fixed, so substituting the values and simplifying decides it; a solver
    over the pinning constraints answers if simplification ever stops short of a literal.
    """
    z3 = z3mod()
    pairs = sym.substitution(assignment)
    if pairs is None:
        return False
    ground = z3.simplify(z3.substitute(formula, *pairs)) if pairs else z3.simplify(formula)
    if z3.is_true(ground) or z3.is_false(ground):
        return bool(z3.is_true(ground))
    solver = z3.Solver()  # pragma: no cover - simplify decides ground formulas
    solver.add(*sym.domain(), *sym.pin(assignment), formula)
    return bool(solver.check() == z3.sat)


def find(formula: Any, sym: SymbolicAssignment) -> dict[str, list[TopicPartition]] | None:
    """Some assignment that satisfies ``formula`` (use ``Not(...)`` to find a
    counterexample), or None when there is none in the universe."""
    z3 = z3mod()
    solver = z3.Solver()
    solver.add(*sym.domain(), formula)
    if solver.check() != z3.sat:
        return None
    return sym.value(solver.model())
