"""groupcheck's own one-node Kafka broker: `impl`'s classic group coordinator on Kafka's wire
protocol (kio's message schemas), steered per member by the harness. See `broker.Broker`."""

from .broker import Broker, BrokerConfig
from .checks import Verdict
from .description import GroupDescription, MemberDescription
from .rounds import Round
from .steering import Exchange, Held

__all__ = ["Broker", "BrokerConfig", "Exchange", "GroupDescription", "Held",
           "MemberDescription", "Round", "Verdict"]
