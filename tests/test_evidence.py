"""Labels from evidence (``--reference``): a violation the reference reproduces — the same
requests get identical answers there — is the reference's own; one it answers otherwise is
the target's own whatever a rule says; rules label only what the reference was not asked.

The audit end to end needs Spark and Kafka's client; the labelling itself is tested on the
chain driver (`audit.evidence.label`), with a reference that cannot run where no Java is
needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import run_chain
from groupcheck.audit.evidence import label, label_entry
from groupcheck.audit.targets import AuditTarget, reference_name
from groupcheck.engines.resolving import resolve_audit_target
from groupcheck.properties.deviations import EVIDENCE

from helpers import TARGETS
from helpers.environment import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
FLAP = json.loads((ROOT / "tests" / "data" / "rack_aware_flap_spec.json")
                  .read_text(encoding="utf-8"))
#: a and b tie on t-0 at generation 3, on Kafka's general path (a also subscribes to u)
TIE = {"op": "assign", "assignor": "cooperative-sticky", "mode": "client",
       "partitions": {"t": 2, "u": 1}, "newGeneration": 4,
       "members": {"a": {"topics": ["t", "u"], "owned": [["t", 0]], "generation": 3},
                   "b": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 3}}}
TIE_SPEC = {"kind": "requests", "requests": [TIE]}


@pytest.fixture(scope="module")
def kafka() -> AuditTarget:
    from helpers.kafka_java import java_command

    java_command()
    return resolve_audit_target("cooperative-sticky@java:", SETTINGS)  # type: ignore[no-any-return]


def test_the_reference_runs_the_targets_own_assignor() -> None:
    assert reference_name("java:", "sticky") == "sticky@java:"
    assert reference_name("java:/opt/kafka", "range") == "range@java:/opt/kafka"
    assert reference_name("builtin:", "roundrobin") == "builtin:roundrobin"
    assert reference_name("pyfn:m:f", "range") == "pyfn:m:f"
    assert label_entry("K1", "java:", "builtin:sticky") == {"label": "rule", "rule": "K1"}
    assert label_entry(EVIDENCE, "java:", "builtin:sticky") == {
        "label": "evidence", "reference": "sticky@java:"}
    assert label_entry(EVIDENCE, "java:", "sticky@java:")["reference"] == "sticky@java:"


def test_a_tie_kafkas_client_answers_identically_is_inherited_from_it(
        kafka: AuditTarget) -> None:
    """Rule K1 labels the builtin's I6 tie; Kafka's client gives the identical answer, so
    with the reference the label comes from evidence instead."""
    target = resolve_audit_target("builtin:cooperative-sticky")
    result = run_chain(target, TIE_SPEC)
    assert result.verdicts["I6"] == 1 and result.inherited == {"I6": "K1"}
    label(result, target, kafka, 30.0)
    assert result.inherited == {"I6": EVIDENCE} and not result.own_violation


def test_a_violation_kafka_answers_otherwise_is_the_targets_own_despite_its_rule(
        kafka: AuditTarget) -> None:
    """An assignor that keeps the first claimant lists a's partitions in another order than
    Kafka: K1 would label its tie, but the evidence says Kafka answers otherwise."""
    target = resolve_audit_target(f"pyfn:{TARGETS / 'audit_targets.py'}"
                                  ":first_claimant_keeps")
    result = run_chain(target, TIE_SPEC)
    assert result.inherited == {"I6": "K1"}
    label(result, target, kafka, 30.0)
    assert result.inherited == {} and result.own_violation


def test_the_rack_aware_flap_is_reproduced_by_kafkas_client(kafka: AuditTarget) -> None:
    """Rule K4 labels the flap without Java; with Kafka's client as the reference every
    call of the chain gets the identical answer, so the label comes from evidence."""
    target = resolve_audit_target("builtin:cooperative-sticky")
    result = run_chain(target, FLAP)
    assert result.inherited.get("I11") == "K4"
    label(result, target, kafka, 30.0)
    assert result.inherited.get("I11") == EVIDENCE


def test_rules_still_label_what_the_reference_could_not_be_asked() -> None:
    """A reference whose process breaks is not evidence either way: the rule stays."""
    def broken(request: dict[str, Any]) -> dict[str, Any]:
        raise BrokenPipeError("the reference's process exited")

    target = resolve_audit_target("builtin:cooperative-sticky")
    result = run_chain(target, TIE_SPEC)
    reference = AuditTarget("cooperative-sticky@broken", "cooperative-sticky", broken)
    label(result, target, reference, 5.0)
    assert result.inherited == {"I6": "K1"}


def test_a_story_without_violations_is_not_asked() -> None:
    def never(request: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("the reference must not be asked")

    target = resolve_audit_target("builtin:range")
    spec = {"kind": "requests", "requests": [{**TIE, "assignor": "range"}]}
    result = run_chain(target, spec)
    assert not result.violated
    label(result, target, AuditTarget("never", "range", never), 5.0)
    assert result.inherited == {}


@pytest.mark.heavy
def test_audit_with_kafkas_client_as_reference_labels_from_evidence(
        kafka: AuditTarget, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``groupcheck audit --target java: --target builtin:cooperative-sticky --reference
    java:`` over the flap and the tie: every violation is reproduced by Kafka's client, the
    summary and the report say so, and the run exits 0 (1 with --strict)."""
    pytest.importorskip("pyspark")
    from groupcheck.cli.audit_command import main as audit_main

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "flap.json").write_text(json.dumps({"spec": FLAP}))
    (corpus / "tie.json").write_text(json.dumps({"requests": [TIE]}))
    out = tmp_path / "out"
    args = ["--target", "java:", "--target", "builtin:cooperative-sticky", "--corpus",
            str(corpus), "--reference", "java:", "--out", str(out)]
    assert audit_main(args) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["reference"] == "java:"
    assert summary["violations"] == summary["inherited_from_kafka"] == \
        summary["inherited_by_evidence"] > 0 and summary["inherited_by_rule"] == 0
    for t in ("builtin:cooperative-sticky", "cooperative-sticky@java:"):
        counts = summary["invariants"][t]
        assert counts["I11"]["violated"] == counts["I11"]["by_evidence"] == 1
        assert counts["I6"]["violated"] == counts["I6"]["by_evidence"] == 1
        example = summary["inherited_examples"][t]["I11"]
        assert example["label"] == "evidence"
        assert example["reference"] == "cooperative-sticky@java:"
    assert ("INHERITED FROM KAFKA builtin:cooperative-sticky I11 [inherited from "
            "cooperative-sticky@java:, which reproduced it]") in printed
    page = (out / "index.html").read_text()
    assert "inherited from cooperative-sticky@java:, which reproduced it" in page
    assert "with --reference java:" in page
    assert audit_main([*args, "--strict"]) == 1


@pytest.mark.heavy
def test_prove_with_kafkas_client_as_reference_labels_every_violation_from_evidence(
        kafka: AuditTarget) -> None:
    """The scope prover on cooperative-sticky: K1's ties (I6) and K2's withheld partitions
    (I4a) are answered identically by Kafka's client up to the round that shows them (the
    follow-up after K2's round differs by D2, which does not matter to it)."""
    from groupcheck.impl.assign_op import run_assign
    from groupcheck.properties.scope import Scope, prove

    scope = Scope.parse("members=2,topics=2,partitions=2,stale=0")
    plain = prove(run_assign, "cooperative-sticky", scope, workers=1)
    assert plain.violations.get("I6") and plain.violations.get("I4a") and plain.ok
    assert plain.evidence == {} and plain.reference is None
    labelled = prove(run_assign, "cooperative-sticky", scope, workers=1,
                     reference=kafka.assign, reference_name="java:")
    assert labelled.violations == plain.violations and labelled.ok
    assert labelled.evidence == labelled.inherited == labelled.violations
    assert set(labelled.rules["I6"]) == {EVIDENCE}
    table = labelled.table()
    assert "reproduced by java:" in table and "labels: " in table
    assert labelled.to_dict()["inheritedFromKafka"]["I4a"]["byEvidence"] == \
        labelled.violations["I4a"]


@pytest.mark.heavy
def test_a_difference_a_deviation_explains_is_no_evidence_so_the_rule_stands(
        kafka: AuditTarget) -> None:
    """With stale claims in scope, Kafka's client answers some of K1's tie requests
    otherwise: it hands the claimed partition the metadata lacks to its claimant (D1, I2),
    which groupcheck does not. Those answers are not identical, so they are not evidence;
    they are not groupcheck's own either, since D1 explains the difference: rule K1 stays."""
    from groupcheck.impl.assign_op import run_assign
    from groupcheck.properties.scope import Scope, prove

    scope = Scope.parse("members=2,topics=2,partitions=2,stale=1")
    labelled = prove(run_assign, "cooperative-sticky", scope, workers=1,
                     reference=kafka.assign, reference_name="java:")
    assert labelled.ok and labelled.inherited == labelled.violations
    assert 0 < labelled.evidence["I6"] < labelled.violations["I6"]
    assert set(labelled.rules["I6"]) == {EVIDENCE, "K1"}


def _prove_labels(out: str) -> dict[str, dict[str, str]]:
    """The prover's Kafka-own findings in ``check --json`` output (one assignor)."""
    engines = json.loads(out)["assignors"]["cooperative-sticky"]["engines"]
    labels: dict[str, dict[str, str]] = engines["prove"]["inheritedFromKafka"]
    return labels


@pytest.mark.heavy
def test_check_says_which_labels_came_from_evidence_and_which_from_a_rule(
        kafka: AuditTarget, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``check --reference java:``: the prover's Kafka-own findings are labelled from
    evidence in the table and the JSON; without a reference the same come from rules."""
    from groupcheck.cli import main

    base = ["check", "--target", "builtin:cooperative-sticky", "--scope",
            "members=2,topics=2,partitions=2,stale=0", "--budget", "4", "--failures", str(tmp_path)]
    assert main([*base, "--json"]) == 0
    plain = _prove_labels(capsys.readouterr().out)
    assert plain["I6"]["label"] == "rule K1" and plain["I4a"]["label"] == "rule K2"
    assert main([*base, "--json", "--reference", "java:"]) == 0
    proved = _prove_labels(capsys.readouterr().out)
    assert proved["I6"]["label"] == proved["I4a"]["label"] == "evidence java:"
    assert main([*base, "--reference", "java:"]) == 0
    table = capsys.readouterr().out
    assert "reproduced" in table and "I6 (evidence java:)" in table


@pytest.mark.heavy
def test_a_shrunk_story_keeps_the_reference_reproducing_it(kafka: AuditTarget) -> None:
    """Shrinking a violation the reference reproduced (the flap, K4 without a reference)
    keeps only candidates Kafka's client still answers identically."""
    from groupcheck.audit.story_shrink import Failure, shrink_story

    target = resolve_audit_target("builtin:cooperative-sticky")
    result = shrink_story(FLAP, target, Failure("I11", EVIDENCE), seconds=30,
                          reference=kafka)
    assert result.chain.inherited.get("I11") == EVIDENCE
    assert result.after["members"] <= result.before["members"]
    assert result.after["partitions"] < result.before["partitions"]
    again = run_chain(target, result.spec)
    label(again, target, kafka, 30.0)
    assert again.inherited.get("I11") == EVIDENCE
