"""Stale metadata in the prover's scope: claims on partitions the leader's
metadata cannot place — numbers at or beyond its count, topics it does not know — as a
member with newer metadata than the leader, or one whose topic shrank, sends them.

Kafka's sticky assignor assigns a partition twice there (the golden vectors' ``kafka_bug``
lines); groupcheck's builtins ignore such claims (deviation D1) and keep I1 and I2.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.properties.scope import Scope, enumerate_scope, prove
from groupcheck.targets.registry import resolve

from helpers import ROOT


def _stale_claims(config: object) -> int:
    metadata = config.metadata  # type: ignore[attr-defined]
    return sum(1 for _, _, _, owned in config.members  # type: ignore[attr-defined]
               for t, p in owned if p >= metadata[t][0])


@pytest.mark.parametrize("stale", [0, 1, 2])
def test_the_scope_holds_up_to_stale_claims_beyond_the_leaders_metadata(stale: int) -> None:
    """With stale=N some configurations claim partitions at or past the leader's count and
    on topics it has no metadata for (count 0), never more than N such claims; stale=0 has
    none, and each claim beyond the metadata stays below the scope's partition bound."""
    scope = Scope.parse(f"members=2,topics=2,partitions=2,generations=1,stale={stale}")
    counts = [_stale_claims(c) for c in enumerate_scope(scope)]
    assert max(counts) == stale
    unknown_topic = any(count == 0 and any(t == topic for m in c.members for t, _ in m[3])
                        for c in enumerate_scope(scope)
                        for topic, (count, _) in enumerate(c.metadata))
    assert unknown_topic == (stale > 0)
    assert all(p < scope.partitions for c in enumerate_scope(scope)
               for m in c.members for _, p in m[3])


@pytest.mark.parametrize("target", [pytest.param("builtin:sticky", marks=pytest.mark.heavy),
                                    "builtin:cooperative-sticky", "builtin:range",
                                    pytest.param("builtin:roundrobin", marks=pytest.mark.heavy)])
def test_the_builtins_keep_i1_and_i2_when_claims_outside_the_metadata_are_in_scope(
        target: str) -> None:
    """Deviation D1 at work: with stale claims in every corner of a small scope, no builtin
    assigns a partition twice (I1) or hands out one the metadata lacks (I2)."""
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    report = prove(resolved.assign, resolved.assignor,
                   Scope.parse("members=2,topics=2,partitions=2,generations=1,stale=2"),
                   workers=1, sticky=resolved.balanced, session=resolved.assign_session)
    assert "I1" not in report.violations and "I2" not in report.violations, report.table()


@pytest.mark.heavy
def test_check_finds_kafkas_double_assignment_on_a_claim_past_the_partition_count(
        tmp_path: Path) -> None:
    """``groupcheck check --target java: --assignor sticky`` on Kafka's own client: the
    scope prover finds Kafka's I1 and prints the smallest request — two members on two
    topics of one partition, one of them claiming partition 1 of its topic, which the
    leader's metadata does not have; Kafka then gives the other member's partition to it
    twice (the vectors' ``assign/edge:claim-beyond-partition-count``)."""
    from helpers.kafka_java import java_command

    java_command()  # skip without Java or Kafka's classpath (fail under REQUIRE_KAFKA)
    proc = subprocess.run(
        [sys.executable, "-m", "groupcheck", "check", "--target", "java:", "--assignor",
         "sticky", "--budget", "40", "--failures", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "I1 [prove]" in proc.stdout, proc.stdout
    (saved_path,) = tmp_path.glob("prove-*-I1-*.json")
    saved = json.loads(saved_path.read_text())
    assert len(saved["members"]) == 2 and sorted(saved["partitions"].values()) == [1, 1]
    stale = [(m, t, p) for m, v in saved["members"].items() for t, p in v["owned"]
             if p >= saved["partitions"].get(t, 0)]
    assert len(stale) == 1
    held = [tuple(tp) for parts in saved["groupcheck"]["response"]["assignment"].values()
            for tp in parts]
    assert len(held) > len(set(held))
    printed = proc.stdout.split("first counterexample (sticky, prove):", 1)[1]
    request = json.loads(printed.split("request:", 1)[1].split("\n", 1)[0])
    assert request["members"] == saved["members"]
