"""What a many-clients load run reports as JSON (`many_clients.ScenarioResult.to_json`): one
scenario's settle times, the broker's request rate, the drivers' memory and each group's
verdict."""

from __future__ import annotations

from typing import TypedDict

__all__ = ["GroupJson", "ScenarioJson", "SettleStats"]


class SettleStats(TypedDict):
    median: float
    max: float


class GroupJson(TypedDict):
    group: str
    clients: list[str]
    verdict: str
    replay: str | None
    late: int


class ScenarioJson(TypedDict):
    """One load scenario's figures (``bench/many_clients.py --json``)."""

    scenario: str
    seed: int
    members: int
    groups: int
    shared_drivers: bool
    join_settle_s: SettleStats | None
    kill_settle_s: SettleStats | None
    seconds: float
    requests: dict[str, int]
    requests_per_s: float
    verdict: str
    drivers: int
    driver_rss_mb: int
    by_group: list[GroupJson]
