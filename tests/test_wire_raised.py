"""I15 on real clients: Kafka's Java consumer reports what its poll() raised to the
application (its member driver tags it, as the Python clients' driver does), so an error the
application must act on reaches the view as raised by poll, and is no finding."""

from __future__ import annotations

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")

from groupcheck.model.event_types import Join  # noqa: E402
from groupcheck.model.group_events import CoordinatorError, Partitions, Settle  # noqa: E402
from groupcheck.model.replay import replay_events  # noqa: E402
from groupcheck.properties.group import GroupTarget, GroupView, RaisedError  # noqa: E402

from helpers.environment import make_group_target, missing  # noqa: E402

pytestmark = pytest.mark.wire


class _Watched:
    """``target``, keeping what every view showed raised (a settle looks many times)."""

    def __init__(self, target: GroupTarget) -> None:
        self._target, self.raised = target, list[RaisedError]()

    def view(self) -> GroupView:
        view = self._target.view()
        self.raised += view.raised
        return view

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)


def test_javas_poll_raises_a_refused_join_to_the_application_as_its_own_error() -> None:
    """GROUP_AUTHORIZATION_FAILED on c1's JoinGroup as c2 joins: Kafka's consumer throws
    GroupAuthorizationException from poll() (not retriable: the application must act)."""
    if missing("java"):
        pytest.skip(missing("java"))
    target = _Watched(make_group_target("wire:java:range"))
    events = [Partitions("t0", 2), Join("c1", ("t0",), ("range",)), Settle(),
              CoordinatorError("c1", "JoinGroup", "GROUP_AUTHORIZATION_FAILED"),
              Join("c2", ("t0",), ("range",)), Settle()]
    outcome = replay_events(target, events, wanted=lambda _: False)
    assert [(r.member, r.error, r.retriable, r.internal) for r in target.raised][:1] == [
        ("c1", "GROUP_AUTHORIZATION_FAILED", False, False)], outcome.story
    assert not any(v.startswith("I15") for v in outcome.violations)
