"""The audit's scenario specs and chain driver, without Spark: specs that depend on seed
and index only and reach big groups, stories the builtin targets pass, and broken,
hanging, throwing and lossy targets caught (I10's round trips run once per codec)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from groupcheck.audit.chain import INVARIANTS, replay_record, run_chain
from groupcheck.audit.scenarios import TIERS, random_spec, spec_size
from groupcheck.audit.targets import AuditTarget, AuditTargetError, resolve_plugin
from groupcheck.engines.resolving import resolve_audit_target
from groupcheck.properties.assignment import exclusive_ownership

from helpers import TARGETS

BROKEN = TARGETS / "audit_targets.py"
#: the audit pipeline's tests: ``tox -e audit`` (``pytest -m audit``) runs them all
pytestmark = pytest.mark.audit


def test_specs_depend_on_seed_and_index_only() -> None:
    assert random_spec(3, 17) == random_spec(3, 17)
    assert json.dumps(random_spec(3, 17)) != json.dumps(random_spec(4, 17))
    assert json.dumps(random_spec(3, 17)) != json.dumps(random_spec(3, 18))


def test_size_distribution_is_heavy_tailed_and_reaches_big_groups() -> None:
    specs = [random_spec(0, i) for i in range(3000)]
    sizes = [spec_size(s) for s in specs]
    tiers = Counter(s["tier"] for s in specs)
    assert tiers[0] > 0.8 * len(specs)  # most groups are small
    assert sum(1 for s in sizes if s["members"] >= 20) >= 20  # some are large
    assert max(s["members"] for s in sizes) <= TIERS[-1].members[1] + 10
    assert max(s["topics"] for s in sizes) <= 50
    for s in specs:
        assert all(0 <= c <= 500 for c in s["partitions"].values())
    ops = Counter(op["op"] for s in specs for step in s["steps"] for op in step)
    for op in ("join", "leave", "stall", "return", "subscribe", "grow", "delete", "none"):
        assert ops[op] > 0, op
    assert any("racks" in s for s in specs)
    assert any(m.get("groupInstanceId") for s in specs for m in s["members"])
    equal = sum(1 for s in specs if len({tuple(m["topics"]) for m in s["members"]}) == 1)
    assert 0 < equal < len(specs)
    gens = [{m["generation"] for m in s["members"] if m["owned"]} for s in specs]
    assert any(len(g) > 1 for g in gens)  # stale claims


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky"])
def test_builtins_pass_small_stories(assignor: str) -> None:
    target = resolve_audit_target(f"builtin:{assignor}")
    for i in range(150):
        result = run_chain(target, random_spec(1, i))
        assert not result.violated, (i, result.violations)
        assert result.verdicts["I1"] == 0 and result.verdicts["I10"] == 0
        assert result.verdicts["I5"] is None  # eager: I5 does not apply
        assert (result.verdicts["I3"] is None) == (assignor != "sticky")


def test_cooperative_stories_are_judged_on_i5_i6_i11() -> None:
    target = resolve_audit_target("builtin:cooperative-sticky")
    checked: Counter[str] = Counter()
    for i in range(100):
        result = run_chain(target, random_spec(2, i))
        for inv in ("I5", "I6", "I11"):
            checked[inv] += result.verdicts[inv] is not None
    assert min(checked.values()) > 50


def test_eager_rebalances_revoke_everything_cooperative_do_not() -> None:
    spec = {"kind": "random", "partitions": {"t0": 6},
            "members": [{"id": "a", "topics": ["t0"], "owned": [], "generation": None},
                        {"id": "b", "topics": ["t0"], "owned": [], "generation": None}],
            "steps": [[{"op": "join", "member": {"id": "c", "topics": ["t0"], "owned": [],
                                                 "generation": None}}]]}
    eager = run_chain(resolve_audit_target("builtin:sticky"), spec)
    coop = run_chain(resolve_audit_target("builtin:cooperative-sticky"), spec)
    assert eager.unowned == 6
    assert coop.unowned == 2  # only the two partitions that move to c
    assert coop.calls == 3  # first rebalance, the join, and its follow-up
    assert eager.moves == coop.moves == 2
    assert not eager.violated and not coop.violated


def test_a_broken_target_is_caught_with_a_replayable_chain() -> None:
    target = resolve_plugin(f"pyfn:{BROKEN}:assign_twice")
    assert target.assignor == "range"
    found = None
    for i in range(50):
        spec = random_spec(0, i)
        result = run_chain(target, spec)
        if result.violated:
            found = replay_record(target, spec, result, i, 0)
            break
    assert found is not None
    assert found["invariant"] == "I1"
    last = found["responses"][-1]["assignment"]
    assert exclusive_ownership({m: [tuple(p) for p in ps] for m, ps in last.items()})
    # the saved request, run on the real assignor, keeps I1
    from groupcheck.impl.assign_op import run_assign

    good = run_assign(found["requests"][-1])["assignment"]
    assert not exclusive_ownership({m: [tuple(p) for p in ps] for m, ps in good.items()})


def test_a_hanging_target_times_out() -> None:
    import time

    def hang(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(5)
        return {}

    result = run_chain(AuditTarget("pyfn:hang", "range", hang), random_spec(0, 1), timeout=0.2)
    assert result.verdicts["TIMEOUT"] == 1 and result.violated


def test_an_exception_is_an_error_verdict() -> None:
    def boom(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no")

    result = run_chain(AuditTarget("pyfn:boom", "range", boom), random_spec(0, 1))
    assert result.verdicts["ERROR"] == 1
    assert set(INVARIANTS) >= {"I1", "I2", "I3", "I4", "I5", "I6", "I10", "I11"}


def test_a_codec_that_drops_the_generation_breaks_i10() -> None:
    builtin = resolve_audit_target("builtin:range")
    assert builtin.codec is not None
    inner = builtin.codec

    class Lossy:
        error = inner.error

        def encode_subscription(self, x: dict[str, Any], version: int) -> bytes:
            return inner.encode_subscription({**x, "generation": -1}, version)

        def decode_subscription(self, data: bytes) -> dict[str, Any]:
            return inner.decode_subscription(data)

    lossy = AuditTarget("pyfn:lossy", "range", builtin.assign, Lossy())
    bad = 0
    for i in range(200):
        spec = random_spec(0, i)
        spec["codec"] = {"writer": 3, "reader": 3, "userData": None}
        if any(m["generation"] for m in spec["members"]):
            result = run_chain(lossy, spec)
            assert result.verdicts["I10"] == 1, result.violations
            bad += 1
            assert not run_chain(builtin, spec).violated
    assert bad > 10


def test_i10_runs_once_for_targets_sharing_a_codec_and_never_mixes_codecs() -> None:
    """The builtin targets share one codec, so a scenario's I10 round trips run once; a target
    with another codec on the same request still gets its own verdict, in either order."""
    sticky, ranged = (resolve_audit_target(f"builtin:{a}") for a in ("sticky", "range"))
    assert sticky.codec is ranged.codec is not None
    inner = ranged.codec
    calls = Counter[str]()

    class Counting:
        error = inner.error

        def __init__(self, lossy: bool) -> None:
            self.lossy = lossy

        def encode_subscription(self, x: dict[str, Any], version: int) -> bytes:
            calls["lossy" if self.lossy else "exact"] += 1
            return inner.encode_subscription({**x, "generation": -1} if self.lossy else x,
                                             version)

        def decode_subscription(self, data: bytes) -> dict[str, Any]:
            return inner.decode_subscription(data)

    shared = Counting(lossy=False)
    first, second = (AuditTarget(f"pyfn:{n}", "range", ranged.assign, shared)
                     for n in ("a", "b"))
    lossy = AuditTarget("pyfn:lossy", "range", ranged.assign, Counting(lossy=True))
    spec = next(s for s in (random_spec(0, i) for i in range(200))
                if any(m["generation"] for m in s["members"]))
    spec["codec"] = {"writer": 3, "reader": 3, "userData": None}
    assert run_chain(first, spec).verdicts["I10"] == 0
    once = calls["exact"]
    assert once > 0
    assert run_chain(second, spec).verdicts["I10"] == 0
    assert calls["exact"] == once  # the same codec and request: not run again
    verdicts = [run_chain(t, spec).verdicts["I10"] for t in (lossy, first, lossy, second)]
    assert verdicts == [1, 0, 1, 0]
    assert calls["exact"] == 3 * once and calls["lossy"] > 0


def test_unknown_targets_are_refused() -> None:
    with pytest.raises(AuditTargetError):
        resolve_audit_target("builtin:nope")
    with pytest.raises(AuditTargetError):
        resolve_audit_target("what:ever")
    with pytest.raises(AuditTargetError):
        resolve_plugin(f"pyfn:{BROKEN}:missing")
