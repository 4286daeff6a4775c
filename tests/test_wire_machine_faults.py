"""The state machine's whole fault table on real librdkafka consumers on groupcheck's broker:
the fuzz engine hands the wire target every API a consumer sends, closed connections, and
coordinator moves where the wire group's broker has two nodes; a short seeded run whose
errors are drawn from the JoinGroup, OffsetCommit and FindCoordinator rows has the broker
answer at least one of them, every invariant judged and none broken."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the steering wire backend) needs kio")
pytest.importorskip("confluent_kafka")

from groupcheck.engines.battery.fuzz import machine_config  # noqa: E402
from groupcheck.engines.faults.table import FULL_TABLE  # noqa: E402
from groupcheck.model.fuzz import fuzz  # noqa: E402
from groupcheck.targets.wire.backends.factory import BROKER_NODES  # noqa: E402
from groupcheck.targets.wire.wire_group import WireGroup  # noqa: E402

from helpers.environment import missing, on_broker, resolve  # noqa: E402

pytestmark = pytest.mark.wire

APIS = ("FindCoordinator", "JoinGroup", "OffsetCommit")
#: the seed's second example (the first is Hypothesis's simplest: joins and settles) arms
#: JoinGroup errors, each followed by a member joining or leaving: the next rebalance's
#: JoinGroup carries it (the machine's draws do not depend on the target)
SEED, EXAMPLES = 6, 2


def _answering(factory: Callable[[], WireGroup], answered: list[tuple[str, str]]
               ) -> Callable[[], WireGroup]:
    """``factory``'s groups, each noting, before it closes, the (API, error) of every
    answer the broker's steering failed."""
    def make() -> WireGroup:
        group = factory()
        close = group.close

        def noted() -> None:
            for e in group.backend.broker.steered():
                if (e.steering or "").startswith("fail"):
                    answered.append((e.api, e.steering or ""))
            close()
        group.close = noted  # type: ignore[method-assign]
        return group
    return make


def test_injected_join_commit_and_find_coordinator_errors_reach_librdkafka_and_hold() -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    target = resolve("wire:librdkafka:range", settings=on_broker("groupcheck"))
    assert target.group is not None
    config = machine_config(target)
    assert config.fault_table == FULL_TABLE and config.closes
    assert config.moves == (BROKER_NODES > 1)  # a move needs a broker of two nodes
    config = replace(config, fault_table={api: FULL_TABLE[api] for api in APIS},
                     crashes=False, statics=False, pauses=False, subscriptions=False,
                     delays=False, sync_orders=False, commit_styles=("none",), closes=False,
                     moves=False)
    answered: list[tuple[str, str]] = []
    result = fuzz(_answering(target.group, answered), config, profile="wire",
                  max_examples=EXAMPLES, seed_value=SEED, shrink_seconds=0)
    assert result.violations == [], result.violations
    assert {"I1", "I2", "I11"} <= set(result.stats.judged)
    assert any(api in APIS for api, _ in answered), answered
