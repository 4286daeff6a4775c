"""One representative per symmetry class of the scope prover's configurations, generated
directly (no candidate is built only to be thrown away as a duplicate).

**Shape of a configuration.** The metadata (per topic a partition count and, with racks,
each partition's rack), then the members as *skeletons* — (subscribed topics, generation,
rack) — and the claims as *columns*: for each partition, the set of members that claim it,
as a bit mask over the member rows. Partitions of a topic are cut into *blocks*: those in
the leader's metadata (one block per rack) and those beyond it (``stale``: numbers at or
past the leader's count, or any partition of a topic the leader does not know).

**The group** acting on labelled configurations, by ``symmetry`` level:

* 0 — none: every labelled configuration (ordered members, every generation value).
* 1 (default) — names: members are renamed (rows permuted), topics are renamed (σ) and
  generations renumbered in order.
* 2 — names and partition numbers: besides, the partitions of one block are renumbered
  among themselves (a partition of the metadata keeps its rack; a stale claim stays stale).

``orders=1`` keeps the members in every order (rows are a sequence, not a multiset): the
order is the leader's receive order, and with the positional ids ``m0, m1, ...`` it decides
Kafka's ``HashMap`` iteration, so an assignor can tell two orders apart.

Why a class shares its verdicts: the invariants never name a member, a topic, a generation
value or a partition number. I1 (no partition twice), I2 (each partition of the metadata
once, to a subscriber), I3 (counts), I4a and the I4b gap (moves, a count), I5 and I6 (who
claimed what, in which order of generations) and I11 (whether the answer changes) are each
invariant under the group. So an assignor that is equivariant — renaming its input renames
its answer — breaks the same invariants on every member of a class. Real assignors are
equivariant only up to their tie-breaks (member order, topic names, partition numbers), so
a reduction trusts that tie-breaks do not decide *whether* an invariant breaks. The tests
measure that trust on the bug zoo's mutants against ``symmetry=0``: topic renaming and
generation renumbering with ``orders=1`` found every violation the full scope found; merging
member orders (the default, as the prover always has) and renumbering partitions
(``symmetry=2``) each miss a few violations of some mutants at small scopes — violations
that show only under some orders or numberings (``tests/test_scope_symmetry.py`` names
them). Bigger scopes find those invariants through other configurations, and the reports
say which reduction ran.

**Canonical form.** Metadata: topics in sorted order of (count, racks), racks sorted within a
topic at level 2. Skeletons: a sorted tuple (a multiset). Claims: per block, the sequence of
columns (levels 0 and 1) or their sorted tuple (level 2, a multiset). A configuration is the
representative of its class when no pair (σ, row permutation) that maps the metadata and the
skeletons onto themselves maps its claims to a smaller tuple; the common case (distinct
skeletons, no two topics alike) has no such pair, and every claim pattern is canonical.

**Weights.** A representative stands for |class| labelled configurations: the orbit of the
metadata × |H| / |stabiliser| (H: topic renamings that fix the metadata × row permutations ×
block renumberings) × the ways to pick its generation values (C(generations, k)). The
stabiliser is counted exactly: the (σ, ρ) pairs that map the claims onto themselves, times
the renumberings that swap equal columns. A test checks the weights against the unreduced
enumeration.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .scope_space import Config, Metadata, Scope

Skeleton = tuple[tuple[int, ...], int, int]  # (topics, generation (0 = none), rack (-1 = none))
# a block: (topic, first partition, size, stale?)
Block = tuple[int, int, int, bool]
Task = tuple["Metadata", int, int]  # (metadata, member count, index of the first skeleton)


def _subsets(items: list[int]) -> list[tuple[int, ...]]:
    return [c for r in range(len(items) + 1) for c in itertools.combinations(items, r)]


def _multiplicities(items: tuple[object, ...] | list[object]) -> int:
    """∏ mult! over the distinct items (the renumberings that only swap equal items)."""
    out = 1
    for mult in Counter(items).values():
        out *= math.factorial(mult)
    return out


def _run_lengths(part: tuple[int, ...]) -> int:
    """``_multiplicities`` of a sorted tuple."""
    out = run = 1
    for a, b in zip(part, part[1:], strict=False):
        run = run + 1 if a == b else 1
        out *= run
    return out


def metadatas(scope: Scope) -> list[tuple[Metadata, int]]:
    """Each metadata of the scope (one per class above level 0) with its orbit size."""
    counts = range(scope.partitions + 1)
    entries: list[tuple[int, tuple[int, ...]]] = []
    for c in counts:
        if not scope.racks:
            entries.append((c, ()))
        elif scope.symmetry >= 2:
            entries += [(c, r) for r in itertools.combinations_with_replacement(
                range(scope.racks), c)]
        else:
            entries += [(c, r) for r in itertools.product(range(scope.racks), repeat=c)]
    if not scope.symmetry:
        return [(m, 1) for m in itertools.product(entries, repeat=scope.topics)]
    out: list[tuple[Metadata, int]] = []
    for meta in itertools.combinations_with_replacement(entries, scope.topics):
        orbit = math.factorial(scope.topics) // _multiplicities(list(meta))
        if scope.symmetry >= 2 and scope.racks:
            for count, racks in meta:
                orbit *= math.factorial(count) // _multiplicities(list(racks))
        out.append((meta, orbit))
    return out


def skeletons(scope: Scope) -> list[Skeleton]:
    return sorted((topics, gen, rack) for topics in _subsets(list(range(scope.topics)))
                  for gen in range(scope.generations + 1) for rack in range(-1, scope.racks))


@dataclass
class Shape:
    """What the enumeration needs to know of one metadata: its blocks, the topic renamings
    that fix it, and how many labelled metadatas it stands for."""

    metadata: Metadata
    orbit: int
    blocks: list[Block]
    stale_blocks: list[int]  # indexes into ``blocks``
    topic_perms: list[tuple[int, ...]]  # σ fixing the metadata, identity excluded
    block_image: dict[tuple[int, ...], list[int]]  # σ → new position of each block
    renumberings: int  # |block renumberings| (level 2), else 1

    @classmethod
    def of(cls, scope: Scope, metadata: Metadata, orbit: int) -> Shape:
        blocks: list[Block] = []
        stale_blocks: list[int] = []
        level2 = scope.symmetry >= 2
        for t, (count, racks) in enumerate(metadata):
            if level2:
                start = 0
                for _, run in itertools.groupby(racks or (None,) * count):
                    size = len(list(run))
                    blocks.append((t, start, size, False))
                    start += size
            else:
                blocks += [(t, p, 1, False) for p in range(count)]
            if scope.stale and count < scope.partitions:
                first = len(blocks)
                if level2:
                    blocks.append((t, count, scope.partitions - count, True))
                else:
                    blocks += [(t, p, 1, True) for p in range(count, scope.partitions)]
                stale_blocks += range(first, len(blocks))
        perms: list[tuple[int, ...]] = []
        images: dict[tuple[int, ...], list[int]] = {}
        if scope.symmetry:
            identity = tuple(range(len(metadata)))
            for sigma in itertools.permutations(range(len(metadata))):
                if sigma != identity and all(metadata[sigma[t]] == metadata[t]
                                             for t in identity):
                    perms.append(sigma)
                    where = {(b[0], b[1]): i for i, b in enumerate(blocks)}
                    images[sigma] = [where[(sigma[b[0]], b[1])] for b in blocks]
        renumberings = 1
        if level2:
            for _, _, size, _ in blocks:
                renumberings *= math.factorial(size)
        return cls(metadata, orbit, blocks, stale_blocks, perms, images, renumberings)


def _columns(rows: tuple[Skeleton, ...], claims: int) -> list[int]:
    """Every claim column over ``rows``: subsets of the members with a generation (a member
    without one owns nothing), at most ``claims`` of them."""
    free = [i for i, row in enumerate(rows) if row[1]]
    return sorted(sum(1 << i for i in subset) for r in range(min(claims, len(free)) + 1)
                  for subset in itertools.combinations(free, r))


def _mask_table(rho: tuple[int, ...]) -> list[int]:
    """Column masks after renaming rows: new row i is old row rho[i]."""
    n = len(rho)
    return [sum(1 << i for i in range(n) if mask >> rho[i] & 1) for mask in range(1 << n)]


def _skeleton_autos(scope: Scope, shape: Shape, rows: tuple[Skeleton, ...]
                    ) -> list[tuple[tuple[int, ...], list[int]]] | None:
    """The (σ, ρ) pairs other than the identity that map metadata and skeletons onto
    themselves, as (block image, mask table); None when some pair maps the skeletons to a
    smaller tuple (no configuration over them is canonical)."""
    autos: list[tuple[tuple[int, ...], list[int]]] = []
    identity_blocks = tuple(range(len(shape.blocks)))
    identity_rows = list(range(len(rows)))
    for sigma in [tuple(range(scope.topics)), *shape.topic_perms]:
        renamed = sigma != tuple(range(scope.topics))
        mapped = [(tuple(sorted(sigma[t] for t in topics)), gen, rack)
                  for topics, gen, rack in rows]
        image = tuple(mapped) if scope.orders else tuple(sorted(mapped))
        if image < rows:
            return None
        if image != rows:
            continue
        if scope.orders:  # rows keep their places: ρ is the identity
            if renamed:
                autos.append((tuple(shape.block_image[sigma]), _mask_table(tuple(identity_rows))))
            continue
        # ρ: new row i is an old row whose σ-image is rows[i]; ties in any order
        classes: dict[Skeleton, list[int]] = {}
        for j, skel in enumerate(mapped):
            classes.setdefault(skel, []).append(j)
        slots = [[i for i, r in enumerate(rows) if r == skel] for skel in classes]
        sources = list(classes.values())
        blocks = tuple(shape.block_image[sigma]) if renamed else identity_blocks
        for choice in itertools.product(*(itertools.permutations(s) for s in sources)):
            rho = [0] * len(rows)
            for targets, picked in zip(slots, choice, strict=True):
                for i, j in zip(targets, picked, strict=True):
                    rho[i] = j
            if not renamed and rho == identity_rows:
                continue
            autos.append((blocks, _mask_table(tuple(rho))))
    return autos


def _patterns(scope: Scope, shape: Shape, columns: list[int]
              ) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Every claim pattern: per block, a sequence (levels 0, 1) or a multiset (level 2) of
    columns; at most ``scope.stale`` claims beyond the metadata in all."""
    level2 = scope.symmetry >= 2

    def choices(size: int, pool: list[int]) -> list[tuple[int, ...]]:
        if level2:
            return list(itertools.combinations_with_replacement(pool, size))
        return [(c,) for c in pool]

    stale_set = set(shape.stale_blocks)
    fresh = [choices(b[2], columns) for i, b in enumerate(shape.blocks) if i not in stale_set]
    stale_pool = [c for c in columns if c.bit_count() <= scope.stale]
    stale_parts = [choices(shape.blocks[i][2], stale_pool) for i in shape.stale_blocks]
    stale_combos = [combo for combo in itertools.product(*stale_parts)
                    if sum(c.bit_count() for part in combo for c in part) <= scope.stale]
    order = [i for i in range(len(shape.blocks)) if i not in stale_set] + shape.stale_blocks
    position = sorted(range(len(order)), key=order.__getitem__)
    for head in itertools.product(*fresh):
        for tail in stale_combos:
            parts = head + tail
            yield tuple(parts[position[i]] for i in range(len(order)))


def _image(pattern: tuple[tuple[int, ...], ...], blocks: tuple[int, ...], table: list[int],
           level2: bool) -> tuple[tuple[int, ...], ...]:
    out: list[tuple[int, ...]] = [()] * len(pattern)
    for k, part in enumerate(pattern):
        moved = [table[c] for c in part]
        out[blocks[k]] = tuple(sorted(moved)) if level2 else tuple(moved)
    return tuple(out)


_ROWS_OF = [tuple(i for i in range(8) if mask >> i & 1) for mask in range(1 << 8)]


def _config(shape: Shape, rows: tuple[Skeleton, ...], pattern: tuple[tuple[int, ...], ...],
            weight: int) -> Config:
    from .scope_space import Config

    owned: list[list[tuple[int, int]]] = [[] for _ in rows]
    for (t, start, _, _), part in zip(shape.blocks, pattern, strict=True):
        for j, mask in enumerate(part):
            for i in _ROWS_OF[mask]:
                owned[i].append((t, start + j))
    members = tuple((topics, gen, rack, tuple(sorted(own)) if own else ())
                    for (topics, gen, rack), own in zip(rows, owned, strict=True))
    return Config(shape.metadata, members, weight)


def _row_tuples(scope: Scope, skels: list[Skeleton], n: int, first: int
                ) -> Iterator[tuple[Skeleton, ...]]:
    """Skeleton tuples starting with ``skels[first]``: sorted (a multiset) above level 0,
    every sequence at level 0; generations dense from 1 above level 0."""
    if not scope.symmetry:
        for rest in itertools.product(skels, repeat=n - 1):
            yield (skels[first], *rest)
        return
    tails = (itertools.product(skels, repeat=n - 1) if scope.orders
             else itertools.combinations_with_replacement(skels[first:], n - 1))
    for rest in tails:
        rows = (skels[first], *rest)
        gens = {row[1] for row in rows if row[1]}
        if gens == set(range(1, len(gens) + 1)):
            yield rows


def configs_of_task(scope: Scope, task: Task, shape: Shape,
                    skels: list[Skeleton]) -> Iterator[Config]:
    _, n, first = task
    level2 = scope.symmetry >= 2
    for rows in _row_tuples(scope, skels, n, first):
        autos = _skeleton_autos(scope, shape, rows) if scope.symmetry else []
        if autos is None:
            continue
        base = 1
        if scope.symmetry:
            gens = len({row[1] for row in rows if row[1]})
            base = (shape.orbit * (len(shape.topic_perms) + 1)
                    * (1 if scope.orders else math.factorial(n))
                    * math.comb(scope.generations, gens) * shape.renumberings)
        for pattern in _patterns(scope, shape, _columns(rows, scope.claims)):
            fixed = 1
            for blocks, table in autos:
                image = _image(pattern, blocks, table, level2)
                if image < pattern:
                    break
                fixed += image == pattern
            else:
                if not scope.symmetry:
                    yield _config(shape, rows, pattern, 1)
                    continue
                swaps = 1
                if level2:
                    for part in pattern:
                        swaps *= _run_lengths(part)
                yield _config(shape, rows, pattern, base // (fixed * swaps))


def tasks_of(scope: Scope) -> list[tuple[Task, int]]:
    """Units of work, (metadata, member count, first skeleton) with their orbit sizes,
    biggest first (by an estimate of the configurations they hold), so that the workers
    finish together."""
    skels = skeletons(scope)
    sized = []
    for meta, orbit in metadatas(scope):
        patterns = _pattern_estimate(scope, Shape.of(scope, meta, orbit))
        for n in range(1, scope.members + 1):
            for i in range(len(skels)):
                ordered = not scope.symmetry or scope.orders
                rest = len(skels) - (0 if ordered else i)
                rows = rest ** (n - 1) if ordered else math.comb(rest + n - 2, n - 1)
                sized.append((-rows * patterns ** (n / scope.members), meta, n, i, orbit))
    sized.sort()
    return [((meta, n, i), orbit) for _, meta, n, i, orbit in sized]


def _pattern_estimate(scope: Scope, shape: Shape) -> int:
    """The claim patterns over ``scope.members`` members that all claim (an upper bound)."""
    columns = sum(math.comb(scope.members, r) for r in range(min(scope.claims,
                                                                 scope.members) + 1))
    out = 1
    for _, _, size, stale in shape.blocks:
        if stale:
            continue
        out *= math.comb(columns + size - 1, size) if scope.symmetry >= 2 else columns
    return out


def upper_bound(scope: Scope) -> int:
    """How many candidates the enumeration visits at most (skeleton tuples × claim
    patterns, before stale claims and canonical forms): for warning about scopes too big to
    run; cheap."""
    skels = len(skeletons(scope))
    total = 0
    for meta, orbit in metadatas(scope):
        patterns = _pattern_estimate(scope, Shape.of(scope, meta, orbit))
        for n in range(1, scope.members + 1):
            ordered = not scope.symmetry or scope.orders
            rows = skels ** n if ordered else math.comb(skels + n - 1, n)
            total += rows * patterns
    return total
