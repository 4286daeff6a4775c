"""The PySpark audit end to end on ``local[2]`` (one shared session), resumption after
``kill -9``, determinism, a broken target, and (slow) a ``local-cluster`` run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from groupcheck.audit.pipeline import AuditConfig, AuditError, run_audit  # noqa: E402
from groupcheck.cli.audit_command import main as audit_main  # noqa: E402
from groupcheck.engines.resolving import resolve_audit_target  # noqa: E402
from groupcheck.engines.worker_pools import worker_pool  # noqa: E402

from helpers import TARGETS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BROKEN = TARGETS / "audit_targets.py"
#: the audit pipeline's tests: ``tox -e audit`` (``pytest -m audit``) runs them all
pytestmark = pytest.mark.audit
PASSING = ["builtin:range", "builtin:roundrobin", "builtin:sticky"]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One Spark session for the worker's whole run (a module scope would start another
    whenever a worker interleaves this module's tests with others)."""
    from groupcheck.audit.session import spark_session

    session = spark_session("local[2]", tmp_path_factory.mktemp("pkg"))
    yield session
    session.stop()


def _imports_every_engine() -> str:
    import groupcheck.engines.differential
    import groupcheck.engines.releases

    return groupcheck.engines.releases.__name__ + groupcheck.engines.differential.__name__


def test_a_process_spawned_after_the_session_imports_the_whole_package(spark: Any) -> None:
    """The zip shipped to the executors holds only what they run; this process's own path
    keeps the installed package first, so a worker pool spawned later imports all of it."""
    assert not any(os.path.basename(entry).startswith("groupcheck-") for entry in sys.path)
    with worker_pool(1, "spawn") as pool:
        assert pool.submit(_imports_every_engine).result(timeout=120)


def _audit(spark: Any, out: Path, **kw: Any) -> Any:
    kw.setdefault("slices", 2)  # tiny chunks: fewer tasks, less scheduling
    config = AuditConfig(targets=kw.pop("targets", PASSING), out=str(out), **kw)
    return run_audit(config, resolve_audit_target, spark=spark)


def _rows(spark: Any, out: Path) -> Any:
    return spark.read.parquet(str(out / "results"))


def test_tiny_audit_end_to_end(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "a"
    outcome = _audit(spark, out, scenarios=160, seed=5, chunk_size=60,
                     targets=[*PASSING, "builtin:cooperative-sticky"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary == outcome.summary
    assert summary["chunks"] == 3
    for t in summary["targets"]:
        assert summary["rows"][t] == summary["scenarios_per_target"][t] == 160
        assert summary["invariants"][t]["I1"]["checked"] == 160
        assert summary["invariants"][t]["I10"]["checked"] == 160
        for inv in PASSING_INVARIANTS:
            if t in PASSING:
                assert summary["invariants"][t][inv]["violated"] == 0, (t, inv)
    assert summary["invariants"]["builtin:range"]["I3"]["checked"] == 0  # range: no I3
    assert summary["invariants"]["builtin:sticky"]["I3"]["checked"] > 0
    assert summary["invariants"]["builtin:sticky"]["I5"]["checked"] == 0  # eager
    assert summary["invariants"]["builtin:cooperative-sticky"]["I5"]["checked"] > 80
    assert summary["invariants"]["builtin:cooperative-sticky"]["I11"]["checked"] > 80
    # range and roundrobin differ on some first rebalances, symmetrically
    d = summary["disagreement"]
    assert d["builtin:range"]["builtin:roundrobin"] == d["builtin:roundrobin"][
        "builtin:range"] > 0
    assert sum(b["scenarios"] for b in summary["by_size"]["builtin:range"]) == 160
    for name in ("index.html", "timings.json", "moves_vs_size.svg", "time_vs_size.svg",
                 "imbalance_vs_size.svg", "disagreement.svg"):
        assert (out / name).stat().st_size > 0, name
    html = (out / "index.html").read_text()
    assert "disagreement.svg" in html and "builtin:sticky" in html
    for agg in ("invariants", "by_size", "disagreement"):
        assert any((out / "aggregates" / agg).glob("target=*"))
    assert sorted(p.name for p in (out / "results" / "chunk=00000").glob("target=*")) == \
        sorted(f"target={t}".replace(":", "%3A") for t in summary["targets"])
    rows = _rows(spark, out)
    assert rows.count() == 160 * 4
    violated = sum(c["violated"] for per in summary["invariants"].values()
                   for c in per.values())
    assert summary["violations"] == violated >= rows.filter("violated").count()


PASSING_INVARIANTS = ("I1", "I2", "I3", "I4", "I10", "ERROR", "TIMEOUT")


@pytest.mark.slow  # tox -e audit
def test_same_seed_gives_identical_summary_whatever_the_partitioning(spark: Any,
                                                                     tmp_path: Path) -> None:
    _audit(spark, tmp_path / "a", scenarios=80, seed=9, chunk_size=40, slices=2)
    _audit(spark, tmp_path / "b", scenarios=80, seed=9, chunk_size=40, slices=7,
           in_flight=3)
    _audit(spark, tmp_path / "c", scenarios=80, seed=10, chunk_size=40)
    a = (tmp_path / "a" / "summary.json").read_bytes()
    assert a == (tmp_path / "b" / "summary.json").read_bytes()
    assert a != (tmp_path / "c" / "summary.json").read_bytes()


@pytest.mark.slow  # tox -e audit
def test_a_rerun_with_other_parameters_is_refused(spark: Any, tmp_path: Path) -> None:
    _audit(spark, tmp_path / "a", scenarios=20, chunk_size=10, targets=["builtin:range"])
    with pytest.raises(AuditError, match="other parameters"):
        _audit(spark, tmp_path / "a", scenarios=30, chunk_size=10, targets=["builtin:range"])


@pytest.mark.heavy
def test_kill_and_rerun_counts_every_scenario_once(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    args = ["--target", "builtin:range", "--target", "builtin:sticky", "--scenarios", "180",
            "--chunk-size", "30", "--slices", "2", "--seed", "3", "--master", "local[2]",
            "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH",
                                                                               "")}
    proc = subprocess.Popen([sys.executable, "-m", "groupcheck", "audit", *args],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    done = out / "results" / "_done"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if done.is_dir() and len(list(done.glob("chunk-*.json"))) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the audit finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its JVM, mid-chunk
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finished = len(list(done.glob("chunk-*.json")))
    assert 2 <= finished < 6
    outcome = _audit(spark, out, scenarios=180, chunk_size=30, seed=3,
                     targets=["builtin:range", "builtin:sticky"])
    assert outcome.chunks_run == 6 - finished
    rows = _rows(spark, out)
    assert rows.count() == 360
    assert rows.select("scenario", "target").distinct().count() == 360
    assert not list((out / "results").glob("_tmp-*"))
    _audit(spark, tmp_path / "whole", scenarios=180, chunk_size=30, seed=3,
           targets=["builtin:range", "builtin:sticky"])
    assert (out / "summary.json").read_bytes() == \
        (tmp_path / "whole" / "summary.json").read_bytes()


def test_a_broken_target_fails_the_audit_with_its_smallest_counterexample(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "broken"
    code = audit_main(["--target", f"pyfn:{BROKEN}:assign_twice", "--target",
                       "builtin:range", "--scenarios", "120", "--chunk-size", "60",
                       "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1
    assert "VIOLATION" in printed and "report: " in printed
    summary = json.loads((out / "summary.json").read_text())
    broken = f"pyfn:{BROKEN}:assign_twice"
    assert summary["invariants"][broken]["I1"]["violated"] > 0
    assert summary["invariants"]["builtin:range"]["I1"]["violated"] == 0
    cex = summary["counterexamples"][broken]["I1"]
    record = json.loads((out / cex["file"]).read_text())
    assert record["invariant"] == "I1" and record["target"] == broken
    # smallest: no violating scenario has fewer members
    rows = _rows(spark, out).filter("I1 = 1")
    assert cex["members"] == rows.agg({"members": "min"}).collect()[0][0]
    # the replay file is a corpus: running it again reproduces the violation
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "cex.json").write_text(json.dumps(record))
    again = _audit(spark, tmp_path / "again", corpus=str(corpus), targets=[broken])
    assert again.summary["scenarios"] == 1
    assert again.summary["invariants"][broken]["I1"]["violated"] == 1


@pytest.mark.slow  # tox -e audit
def test_kafkas_java_client_runs_in_the_executors_and_agrees_where_no_deviation_applies(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--target java:`` is Kafka's client under each of the four assignors, one JVM per
    Python worker; range and roundrobin, where groupcheck has no deviation from Kafka,
    answer every first rebalance as the builtins do, and its codec holds I10."""
    from helpers.kafka_java import java_command

    java_command()
    out = tmp_path / "java"
    code = audit_main(["--target", "java:", "--target", "builtin:range", "--target",
                       "builtin:roundrobin", "--scenarios", "120", "--chunk-size", "60",
                       "--out", str(out)])
    assert code in (0, 1)
    summary = json.loads((out / "summary.json").read_text())
    java = [f"{a}@java:" for a in ("range", "roundrobin", "sticky", "cooperative-sticky")]
    assert summary["targets"] == [*java, "builtin:range", "builtin:roundrobin"]
    for t in java:
        assert summary["rows"][t] == 120 and summary["invariants"][t]["I10"] == {
            "checked": 120, "violated": 0, "inherited": 0, "by_evidence": 0}
        assert summary["invariants"][t]["ERROR"]["violated"] == 0
    for a in ("range", "roundrobin"):
        assert summary["disagreement"][f"builtin:{a}"][f"{a}@java:"] == 0
        assert not any(c["violated"] for c in summary["invariants"][f"{a}@java:"].values())
    assert f"report: {out.resolve()}" in capsys.readouterr().out.replace("/index.html", "")


def _tie_file(folder: Path, name: str, generation_of_a: int, general: bool = True) -> None:
    """A one-request chain: a and b claim t-0, b at generation 3, a at ``generation_of_a``;
    with ``general`` a subscribes to one more topic than b (Kafka's general path), else both
    subscribe to t alone (the constrained path, where Kafka resolves claims by generation)."""
    folder.mkdir(exist_ok=True)
    request = {"op": "assign", "assignor": "cooperative-sticky", "mode": "client",
               "partitions": {"t": 2, "u": 1} if general else {"t": 2}, "newGeneration": 4,
               "members": {"a": {"topics": ["t", "u"] if general else ["t"],
                                 "owned": [["t", 0]], "generation": generation_of_a},
                           "b": {"topics": ["t"], "owned": [["t", 0], ["t", 1]],
                                 "generation": 3}}}
    (folder / name).write_text(json.dumps({"requests": [request]}))


@pytest.mark.heavy  # two audits of a minute: the quick start's audit reports Kafka's behaviour
def test_kafka_behaviour_is_reported_and_fails_the_run_only_with_strict(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    _tie_file(corpus, "tie.json", 3)
    out = tmp_path / "kafka"
    args = ["--target", "builtin:cooperative-sticky", "--corpus", str(corpus), "--out",
            str(out)]
    assert audit_main(args) == 0
    printed = capsys.readouterr().out
    assert "INHERITED FROM KAFKA builtin:cooperative-sticky I6 [rule K1]" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["violations"] == summary["inherited_from_kafka"] == 1 and summary["ok"]
    assert summary["invariants"]["builtin:cooperative-sticky"]["I6"] == {
        "checked": 1, "violated": 1, "inherited": 1, "by_evidence": 0}
    example = summary["inherited_examples"]["builtin:cooperative-sticky"]["I6"]
    assert example["rule"] == "K1" and example["label"] == "rule"
    assert "K1" in summary["kafka_rules"] and summary["inherited_by_rule"] == 1
    assert json.loads((out / example["file"]).read_text())["inherited_from_kafka"] == {
        "I6": "K1"}
    assert summary["counterexamples"] == {}
    page = (out / "index.html").read_text()
    assert "Inherited from Kafka" in page and "(as Kafka)" in page
    assert audit_main([*args, "--strict"]) == 1  # resumes the same audit: nothing reruns
    assert "INHERITED FROM KAFKA" in capsys.readouterr().out


def test_a_real_violation_fails_the_run_beside_an_inherited_one(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    _tie_file(corpus, "a-tie.json", 3)
    # a's stale claim wins on the constrained path: no Kafka rule excuses it
    _tie_file(corpus, "b-stale.json", 2, general=False)
    target = f"pyfn:{BROKEN}:first_claimant_keeps"
    out = tmp_path / "mixed"
    assert audit_main(["--target", target, "--corpus", str(corpus), "--out", str(out),
                       "--shrink-seconds", "0"]) == 1
    printed = capsys.readouterr().out
    assert f"VIOLATION {target} I6" in printed and "INHERITED FROM KAFKA" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["violations"] == 2 and summary["inherited_from_kafka"] == 1
    assert not summary["ok"]
    assert summary["counterexamples"][target]["I6"]["scenario"] == 1  # b-stale.json
    assert summary["inherited_examples"][target]["I6"]["scenario"] == 0  # a-tie.json


def test_the_corpus_takes_a_story_as_every_command_does(
        spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bare story, as ``groupcheck shrink`` and ``replay`` take it, and the same story
    wrapped as ``{"spec": …}`` both play: the rack-aware flap that never settles, Kafka's own
    behaviour (rule K4) on cooperative-sticky."""
    story = (ROOT / "tests" / "data" / "rack_aware_flap_spec.json").read_text(encoding="utf-8")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a-bare.json").write_text(story, encoding="utf-8")
    (corpus / "b-wrapped.json").write_text(json.dumps({"spec": json.loads(story)}),
                                           encoding="utf-8")
    out = tmp_path / "out"
    target = "builtin:cooperative-sticky"
    assert audit_main(["--target", target, "--corpus", str(corpus), "--out", str(out),
                       "--shrink-seconds", "0"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenarios"] == 2
    flap = summary["invariants"][target]["I11"]
    assert (flap["checked"], flap["violated"], flap["inherited"]) == (2, 2, 2), flap


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert audit_main(["--target", "builtin:nope", "--out", str(tmp_path / "x")]) == 2
    assert "unknown assignor" in capsys.readouterr().err
    assert audit_main(["--scenarios", "0", "--out", str(tmp_path / "x")]) == 2


PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[1])  # the driver imports the checkout; executors get the zip
from groupcheck.audit.pipeline import AuditConfig, run_audit
from groupcheck.audit.session import spark_session
from groupcheck.engines.resolving import resolve_audit_target

spark = spark_session(sys.argv[2], sys.argv[3] + "/_package")


def probe(_):
    import groupcheck.audit
    daemon = os.getppid()
    jvm = open(f"/proc/{daemon}/stat").read().split(")")[1].split()[1]
    cmd = open(f"/proc/{jvm}/cmdline").read().split("\\0")
    executor = cmd[cmd.index("--executor-id") + 1] if "--executor-id" in cmd else "driver"
    return [(executor, int(jvm), groupcheck.audit.__file__)]


seen = spark.sparkContext.parallelize(range(8), 8).flatMap(probe).collect()
config = AuditConfig(targets=["builtin:range", "builtin:cooperative-sticky"], scenarios=200,
                     chunk_size=100, out=sys.argv[3])
outcome = run_audit(config, resolve_audit_target, spark=spark)
print(json.dumps({"seen": seen, "driver": os.getpid(), "chunks": outcome.chunks_run}))
spark.stop()
"""


@pytest.mark.slow  # about 2 minutes (tox -e audit)
def test_local_cluster_runs_distributed_and_agrees_with_local(spark: Any,
                                                              tmp_path: Path) -> None:
    """Two executor JVMs (``local-cluster[2,1,1024]``) that import ``groupcheck`` from the
    shipped zip; the summary equals the in-process ``local[2]`` one."""
    import pyspark

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = tmp_path / "cluster"
    proc = subprocess.run([sys.executable, str(script), str(ROOT), "local-cluster[2,1,1024]",
                           str(out)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    executors = {e for e, _, _ in report["seen"]}
    assert executors == {"0", "1"}, report["seen"]  # two separate executor JVMs
    assert len({jvm for _, jvm, _ in report["seen"]}) == 2
    assert all(".zip" in f for _, _, f in report["seen"]), report["seen"]
    assert report["chunks"] == 2
    _audit(spark, tmp_path / "local", scenarios=200, chunk_size=100,
           targets=["builtin:range", "builtin:cooperative-sticky"])
    assert (out / "summary.json").read_bytes() == \
        (tmp_path / "local" / "summary.json").read_bytes()


@pytest.mark.parametrize(("files", "said"), [
    ({}, "holds no *.json file"),
    ({"a.json": '{"events": [{"op": "join"}]}'}, "neither an audit story"),
    ({"a.json": '{"requests": [{"partitions": {"t": 1}}]}'}, "has no members object"),
    ({"a.json": "{not json"}, "is not JSON"),
    ({"a.json": '{"format": "groupcheck-replay/1", "events": []}'},
     "groupcheck replay and groupcheck shrink play it"),
])
def test_a_corpus_the_audit_cannot_play_is_a_usage_error(
        files: dict[str, str], said: str, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    """Every corpus file is read before Spark starts: a file that is no story would
    otherwise run as an empty one and pass ("every invariant held")."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in files.items():
        (corpus / name).write_text(text)
    assert audit_main(["--corpus", str(corpus), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert not (tmp_path / "out").exists()
