"""``groupcheck jsonl --target T``: a target's assignors and codec served over the JSON-lines
contract, so that ``jsonl:groupcheck jsonl --target mutant:<name>`` is a process target that
answers as the mutant does."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.impl.assign_op import run_assign
from groupcheck.impl.jsonl import OPS, handle
from groupcheck.impl.user_data import decode_sticky_user_data
from groupcheck.properties.jsonl_shapes import AssignRequest
from groupcheck.targets.offers import close_all, expand
from groupcheck.targets.registry import resolve
from groupcheck.targets.served import target_ops
from groupcheck.targets.target import TargetError

ROOT = Path(__file__).resolve().parent.parent
SERVE = f"{sys.executable} -m groupcheck jsonl --target"

#: KAFKA-12984's trigger: two members claim t0p0 at the same generation
DOUBLE_CLAIM: AssignRequest = {
    "op": "assign", "mode": "client", "assignor": "cooperative-sticky", "partitions": {"t0": 3},
    "members": {"m0": {"topics": ["t0"], "owned": [["t0", 0], ["t0", 1]], "generation": 1},
                "m1": {"topics": ["t0"], "owned": [["t0", 0], ["t0", 2]], "generation": 1},
                "m2": {"topics": ["t0"], "owned": [], "generation": 1}}}


def _holders(answer: dict, tp: list) -> list[str]:
    return sorted(m for m, ps in answer["assignment"].items() if tp in ps)


def test_served_mutant_answers_assign_as_the_mutant_does() -> None:
    """The served ``assign`` is the mutant's: t0p0 stays with both claimants, where
    groupcheck's own cooperative-sticky withholds it."""
    target = resolve("mutant:cooperative-trust-claims")
    ops = target_ops(target)
    served = handle(dict(DOUBLE_CLAIM), ops)
    assert served == {**target.assign(dict(DOUBLE_CLAIM)), "ms": served["ms"]}
    assert _holders(served, ["t0", 0]) == ["m0", "m1"]
    assert _holders(run_assign(dict(DOUBLE_CLAIM)), ["t0", 0]) == []


def test_served_mutant_refuses_assignor_names_it_does_not_run() -> None:
    """A name other than the mutant's gets an error answer, as from a user's process that
    implements one assignor."""
    ops = target_ops(resolve("mutant:cooperative-trust-claims"))
    for op in ("assign", "user_data"):
        answer = handle({**DOUBLE_CLAIM, "op": op, "assignor": "range"}, ops)
        assert "unknown assignor 'range'" in str(answer.get("error")), answer


def test_served_user_data_comes_from_the_mutants_consumer() -> None:
    """``user_data`` runs a fresh instance of the mutant: aiokafka #1176's consumer drops the
    generation it is told, groupcheck's keeps it."""
    request = {"op": "user_data", "assignor": "sticky", "topics": ["t0"],
               "owned": [["t0", 0]], "generation": 5}
    served = handle(request, target_ops(resolve("mutant:sticky-generation-unset")))
    own = handle(request)
    assert decode_sticky_user_data(base64.b64decode(served["userData"])).generation == -1
    assert decode_sticky_user_data(base64.b64decode(own["userData"])).generation == 5


def test_served_codec_mutant_writes_with_its_codec_beside_kafkas_assignors() -> None:
    """A codec mutant's server writes subscriptions with that codec (KAFKA-12898: topics in
    the caller's order) and runs groupcheck's four assignors."""
    ops = target_ops(resolve("mutant:codec-unsorted"))
    request = {"op": "encode_subscription", "version": 1, "topics": ["b", "a"], "owned": []}
    served, own = handle(request, ops), handle(request)
    assert served["hex"] != own["hex"]
    decoded = handle({"op": "decode_subscription", "hex": served["hex"]}, ops)
    assert decoded["topics"] == ["b", "a"]
    assign = {**DOUBLE_CLAIM, "assignor": "range"}
    assert handle(assign, ops)["assignment"] == run_assign(assign)["assignment"]


def test_target_with_nothing_to_serve_is_refused() -> None:
    """A group-only mutant (it changes the consumer, not the assignor) has nothing the
    contract serves."""
    with pytest.raises(TargetError, match="no assign function and no codec"):
        target_ops(resolve("mutant:pause-dropper"))


def test_served_module_runs_each_of_its_assignors_by_name() -> None:
    """``python:pkg.module`` serves every assignor the module defines, under its name."""
    ops = target_ops(resolve("python:groupcheck.impl.assignors.range"))
    assert ops.keys() == OPS.keys()
    answer = handle({**DOUBLE_CLAIM, "assignor": "range"}, ops)
    assert "assignment" in answer, answer


def test_jsonl_command_serves_a_mutant_as_a_process_target() -> None:
    """``jsonl:groupcheck jsonl --target mutant:<name>``: the process target supports only
    the mutant's assignor, and answers with its assignment."""
    offers = expand(f"jsonl:{SERVE} mutant:cooperative-trust-claims")
    try:
        supported = [o for o in offers if o.supported]
        assert [o.label for o in supported] == ["cooperative-sticky"]
        target = supported[0].target
        assert target is not None and target.assign is not None
        assert _holders(target.assign(dict(DOUBLE_CLAIM)), ["t0", 0]) == ["m0", "m1"]
    finally:
        close_all(offers)


def test_jsonl_command_with_nothing_to_serve_exits_with_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "jsonl", "--target",
                           "mutant:pause-dropper"], input='{"op":"ping"}\n', text=True,
                          capture_output=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc
    assert "no assign function" in proc.stderr and proc.stdout == ""


def test_jsonl_command_without_target_still_answers_as_groupcheck() -> None:
    request = json.dumps({**DOUBLE_CLAIM, "assignor": "sticky"})
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "jsonl"], input=request + "\n",
                          text=True, capture_output=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = run_assign({**DOUBLE_CLAIM, "assignor": "sticky"})
    assert json.loads(proc.stdout)["assignment"] == expected["assignment"]
