"""The pytest plugin in a throwaway project: a correct assignor passes, a broken one fails
with the counterexample in the failure message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ASSIGNORS = '''
from groupcheck.impl.types import Assignment, RebalanceProtocol


class RoundRobinish:
    """Deals each topic's partitions over its subscribers in member-id order: each topic is
    split evenly, the group as a whole need not be (the range contract)."""

    name = "my-assignor"
    supported_protocols = (RebalanceProtocol.EAGER,)
    balance = "range"

    def assign(self, cluster, subscriptions):
        out = {m: [] for m in subscriptions}
        members = sorted(subscriptions)
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            takers = [m for m in members if topic in subscriptions[m].topics]
            for p in range(cluster.partitions.get(topic, 0)):
                out[takers[p % len(takers)]].append((topic, p))
        return {m: Assignment(ps) for m, ps in out.items()}

    def on_assignment(self, assignment, generation):
        pass

    def subscription_user_data(self, topics):
        return None


class Greedy(RoundRobinish):
    """Broken: the last member also takes the first member's first partition."""

    def assign(self, cluster, subscriptions):
        out = super().assign(cluster, subscriptions)
        members = sorted(out)
        if len(members) > 1 and out[members[0]].partitions:
            out[members[-1]].partitions.append(out[members[0]].partitions[0])
        return out
'''


def _pytest(project: Path, target: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "groupcheck.pytest_plugin", "-p",
         "no:cacheprovider", "--groupcheck-target", target, "--groupcheck-budget", "1",
         "--groupcheck-scope", "members=2,topics=2,partitions=1",
         "--groupcheck-failures", str(project / "failures"), "-q"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600)


def test_plugin_passes_a_correct_assignor_and_fails_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "assignors.py").write_text(ASSIGNORS)
    (tmp_path / "test_nothing.py").write_text("def test_own():\n    assert True\n")

    good = _pytest(tmp_path, "python:mypkg.assignors:RoundRobinish")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "3 passed" in good.stdout  # the project's own test, prove and fuzz

    bad = _pytest(tmp_path, "python:mypkg.assignors:Greedy")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "groupcheck[python:mypkg.assignors:Greedy][my-assignor]::prove" in bad.stdout
    assert "violates I1" in bad.stdout
    assert "counterexample:" in bad.stdout and '"members"' in bad.stdout
    assert list((tmp_path / "failures").glob("prove-*I1*.json"))
