"""The state machine's injected errors come from its config's fault table: the default draws
the errors every target plays (SyncGroup and Heartbeat), the full table (broker/faults.py,
handed over by the engines to groupcheck's broker) every API a consumer sends; the engines
hand each target only the table it can play. A config with ``closes`` also draws closed
connections, a rule bound only there."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import pytest

from groupcheck.broker.faults import faults_of, refusal
from groupcheck.broker.protocol import SUPPORTED
from groupcheck.broker.steering import api_key_of
from groupcheck.engines.battery.fuzz import machine_config
from groupcheck.engines.faults.points import APIS
from groupcheck.engines.faults.table import FULL_TABLE, fault_table
from groupcheck.model.fuzz import fuzz
from groupcheck.model.machine import MachineConfig, make_machine
from groupcheck.model.machine_config import ERRORS
from groupcheck.properties.group import GroupTarget
from groupcheck.targets.registry import group_target_factory, resolve
from groupcheck.targets.target import MachineHints, Target

Drawn = list[tuple[str, str]]
#: the in-process runs whose injected errors are counted (60 examples draw every API)
EXAMPLES, SEED = 60, 3


def _recording(factory: Callable[[], GroupTarget], drawn: Drawn) -> Callable[[], GroupTarget]:
    """``factory``'s targets, each injected error also noted in ``drawn``."""
    def make() -> GroupTarget:
        target = factory()
        inject = target.inject_error

        def noted(member: str, api: str, error: str) -> set[str] | None:
            drawn.append((api, error))
            return inject(member, api, error)
        target.inject_error = noted  # type: ignore[method-assign]
        return target
    return make


def _draws(table: dict[str, tuple[str, ...]] | None) -> Drawn:
    """The errors a seeded run over the in-process range group injects."""
    config = MachineConfig(strategies=(("range",),), metadata=False, pauses=False,
                           subscriptions=False, unsubscribes=False)
    if table is not None:
        config = replace(config, fault_table=table)
    drawn: Drawn = []
    fuzz(_recording(group_target_factory("builtin:range"), drawn), config,
         max_examples=EXAMPLES, seed_value=SEED)
    return drawn


def test_the_default_table_draws_exactly_the_sync_and_heartbeat_errors() -> None:
    pairs = {(api, error) for api, errors in ERRORS.items() for error in errors}
    assert MachineConfig(strategies=(("range",),)).fault_table == ERRORS
    drawn = _draws(None)
    assert set(drawn) <= pairs and {api for api, _ in drawn} == set(ERRORS)


def test_the_full_table_draws_errors_on_every_api_a_consumer_sends() -> None:
    drawn = _draws(dict(FULL_TABLE))
    by_api = Counter(api for api, _ in drawn)
    assert set(by_api) == set(APIS)
    assert all((api, error) in {(a, e) for a in FULL_TABLE for e in FULL_TABLE[a]}
               for api, error in drawn)
    errors_by_api = {api: {e for a, e in drawn if a == api} for api in by_api}
    assert any(len(errors) > 1 for errors in errors_by_api.values()), errors_by_api


@pytest.mark.parametrize("api", APIS)
def test_the_full_table_holds_the_errors_the_broker_lets_any_version_of_the_api_carry(
        api: str) -> None:
    """A member of any client speaks some version the broker serves: an error the oldest
    of them cannot carry would be refused (or not applied) mid-story."""
    key = api_key_of(api)
    oldest = SUPPORTED[key][1]
    carried = [f.error for f in faults_of(api) if refusal(key, f.code, oldest) is None]
    assert FULL_TABLE[api] == tuple(dict.fromkeys(carried))


def _target(wire: bool, steering: bool) -> Target:
    return Target("t", "range", hints=MachineHints("range", wire=wire, steering=steering))


@pytest.mark.parametrize(("wire", "steering", "full"), [
    (True, True, True),     # groupcheck's broker: any API, any error of its table
    (True, False, False),   # the mock: three errors on JoinGroup, SyncGroup, Heartbeat
    (False, False, False),  # in process: SyncGroup and Heartbeat answers alone
])
def test_each_target_is_handed_only_the_table_it_can_play(wire: bool, steering: bool,
                                                          full: bool) -> None:
    assert fault_table(_target(wire, steering)) == (FULL_TABLE if full else ERRORS)


def test_the_fuzz_engine_hands_an_in_process_target_the_default_table() -> None:
    assert machine_config(resolve("builtin:cooperative-sticky")).fault_table == ERRORS


class _Steered:
    """An in-process group that notes the API of each steering call ``method`` it gets
    (``close_before_answer``, ``move_coordinator``: groupcheck's broker plays them; the
    group in process has no connection to drop and one coordinator)."""

    def __init__(self, target: GroupTarget, method: str, noted: list[str]) -> None:
        self._target, self._method, self._noted = target, method, noted

    def __getattr__(self, name: str) -> object:
        if name == self._method:
            return lambda member, api: self._noted.append(api)
        return getattr(self._target, name)


def _steered_apis(method: str, **asked: bool) -> list[str]:
    """The APIs a short seeded run of a machine whose config has ``asked`` steers."""
    config = MachineConfig(strategies=(("range",),), metadata=False, pauses=False,
                           subscriptions=False, unsubscribes=False,
                           fault_table=dict(FULL_TABLE), **asked)
    make, noted = group_target_factory("builtin:range"), list[str]()
    fuzz(lambda: _Steered(make(), method, noted), config,  # type: ignore[arg-type, return-value]
         max_examples=EXAMPLES, seed_value=SEED)
    return noted


def test_a_config_with_closes_draws_closed_connections_on_the_tables_apis() -> None:
    closed = _steered_apis("close_before_answer", closes=True)
    assert closed and set(closed) <= set(FULL_TABLE)


def test_the_close_rule_is_bound_only_where_the_config_asks_so_other_seeds_keep_their_draws(
        ) -> None:
    make = group_target_factory("builtin:range")
    config = MachineConfig(strategies=(("range",),))
    assert not hasattr(make_machine(make, config), "coordinator_closes_connection")
    assert hasattr(make_machine(make, replace(config, closes=True)),
                   "coordinator_closes_connection")


def test_a_config_with_moves_draws_coordinator_moves_on_the_tables_apis() -> None:
    moved = _steered_apis("move_coordinator", moves=True)
    assert moved and set(moved) <= set(FULL_TABLE)


def test_the_move_rule_is_bound_only_where_the_config_asks() -> None:
    make = group_target_factory("builtin:range")
    config = MachineConfig(strategies=(("range",),))
    assert not hasattr(make_machine(make, config), "coordinator_moves")
    assert not hasattr(make_machine(make, replace(config, closes=True)), "coordinator_moves")
    assert hasattr(make_machine(make, replace(config, moves=True)), "coordinator_moves")
