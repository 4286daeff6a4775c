"""The state machine's connection rules: the coordinator closes a member's connection
instead of answering its next request of one API (`ConnectionClosed`), or moves to another
broker when that request arrives (`CoordinatorMoved`).

What lives here: `ConnectionRules` and `MoveRules`, mixins `machine.make_machine` binds only
for a config with ``closes`` (a backend that can drop one member's connection) or ``moves``
(a backend of two nodes or more): groupcheck's broker. Hypothesis orders a machine's rules by
name, so a rule added to every machine would change the examples of every seed; bound only
where the config asks, the machines without it keep their draws. The APIs are those of the
config's fault table (every API a consumer sends, on groupcheck's broker).
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .group_events import ConnectionClosed, CoordinatorMoved
from .machine_state import MachineState

__all__ = ["ConnectionRules", "MoveRules"]


def _member_and_api(state: MachineState, data: st.DataObject) -> tuple[str, str]:
    """A present member and an API of the config's fault table: whose next request of
    which API the coordinator steers."""
    member = data.draw(st.sampled_from(state.present()), label="member")
    return member, data.draw(st.sampled_from(sorted(state.config.fault_table)), label="api")


class ConnectionRules(MachineState):
    """Rules for a coordinator whose connections can drop (issue: the consumer's side)."""

    @precondition(lambda self: self.config.faults and self.config.closes
                  and bool(self.config.fault_table) and bool(self.present()))
    @rule(data=st.data())
    def coordinator_closes_connection(self, data: st.DataObject) -> None:
        """The coordinator takes one member's next request of one API and closes the
        connection instead of answering: the client reconnects and asks again."""
        self.run(ConnectionClosed(*_member_and_api(self, data)))


class MoveRules(MachineState):
    """Rules for a coordinator that can move to another broker (issue: the consumer's side)."""

    @precondition(lambda self: self.config.faults and self.config.moves
                  and bool(self.config.fault_table) and bool(self.present()))
    @rule(data=st.data())
    def coordinator_moves(self, data: st.DataObject) -> None:
        """The group's coordinator moves to another broker as one member's next request of
        one API arrives: the old one answers it NOT_COORDINATOR, and every member finds the
        new one with FindCoordinator."""
        self.run(CoordinatorMoved(*_member_and_api(self, data)))
