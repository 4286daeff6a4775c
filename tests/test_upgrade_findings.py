"""The rolling-upgrade findings (``findings/upgrades/``), each a replay file of
``groupcheck upgrade``'s certification table, played again on the releases it names.

A refusal (a client that will not start with the assignor list KIP-429's first bounce gives
it) is the client's own check at creation: it reproduces word for word, in seconds, in the
default run. The others depend on the timing of real consumers on real sockets (a restart
while the old incarnation is still listed, a member refused until its session expires) and
run with ``GROUPCHECK_UPGRADES=1`` (``tox -e upgrades``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.model.event_shrink import invariant_of
from groupcheck.model.event_types import Join
from groupcheck.model.events import read_events
from groupcheck.model.replay import replay_events
from groupcheck.targets.registry import make_group_target
from groupcheck.targets.wire import clients

from helpers.environment import SETTINGS

FOLDER = Path(__file__).resolve().parent.parent / "findings" / "upgrades"
FILES = sorted(FOLDER.glob("upgrade-*.json"))
#: the tests of rolling upgrades: ``tox -e upgrades`` (``pytest -m upgrades``) runs them all
pytestmark = pytest.mark.upgrades


def _body(path: Path) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return body


def _refusal(path: Path) -> bool:
    return "refused to start" in _body(path)["violations"][0]


def _needs(body: dict[str, Any]) -> None:
    """Skip, with the reason, when a release the file names cannot run here."""
    for name in sorted({e.client for e in read_events(body["events"])
                        if isinstance(e, Join) and e.client}):
        if name.startswith("java@"):
            if not SETTINGS.maven_repo:
                pytest.skip("no Maven repository of Kafka's releases ($GROUPCHECK_MAVEN_REPO)")
            continue
        reason = clients.missing(name)
        if reason:
            pytest.skip(reason)


def test_every_failure_of_the_table_names_both_releases_the_path_and_the_bounce() -> None:
    assert len(FILES) >= 8
    for path in FILES:
        body = _body(path)
        upgrade = body["upgrade"]
        assert upgrade["path"].replace(" ", "-") in path.name
        assert f"bounce{upgrade['bounce']}" in path.name
        assert body["note"].startswith("U") and body["target"] == upgrade["from"]
        assert all(c["version"] and c["profile"] for c in upgrade["clients"].values())


@pytest.mark.parametrize("path", [p for p in FILES if _refusal(p)], ids=lambda p: p.stem[:60])
def test_a_client_refusing_kip429s_first_bounce_refuses_in_its_own_words(path: Path) -> None:
    body = _body(path)
    _needs(body)
    outcome = replay_events(make_group_target(body["target"], SETTINGS),
                            read_events(body["events"]))
    assert outcome.violations[:1] == body["violations"][:1]


@pytest.mark.slow  # minutes of real clients (tox -e upgrades)
@pytest.mark.parametrize("path", [p for p in FILES if not _refusal(p)],
                         ids=lambda p: p.stem[:60])
def test_a_timing_dependent_upgrade_failure_reproduces(path: Path) -> None:
    body = _body(path)
    _needs(body)
    outcome = replay_events(make_group_target(body["target"], SETTINGS),
                            read_events(body["events"]))
    assert outcome.violations
    assert invariant_of(outcome.violations[0]) in body.get("reproduces", [body["invariant"]])
