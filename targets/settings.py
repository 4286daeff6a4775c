"""What the environment may tell the targets, read once by the caller and passed down.

Nothing under ``targets/`` reads ``os.environ`` for a setting of groupcheck's: the command
line (``groupcheck.cli``) and the pytest plugin build one `Settings` at their edge
(`Settings.from_environ`), and `registry.resolve` hands it to the targets it makes.

=========================== ========================== =====================================
variable                    field                      meaning
=========================== ========================== =====================================
``GROUPCHECK_BROKER``       ``broker``                 the cluster ``wire:`` targets run on
``GROUPCHECK_KAFKA_CLASSPATH`` ``kafka_classpath``     Kafka's client for ``java:`` (empty)
``GROUPCHECK_MAVEN_REPO``   ``maven_repo``             releases for ``java@<version>:`` ('')
``KAFKA_HOME``              ``kafka_home``             a Kafka distribution (its ``libs``)
``GROUPCHECK_JSONL_TIMEOUT`` ``jsonl_timeout``         seconds a process target may take
``GROUPCHECK_WIRE_TRACE``   ``wire_trace``             the mock's proxy traces to stderr
=========================== ========================== =====================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_JSONL_TIMEOUT", "Settings", "SettingsError"]

#: seconds a ``jsonl:`` or ``java:`` request may take before it is a TIMEOUT
DEFAULT_JSONL_TIMEOUT = 10.0


class SettingsError(ValueError):
    """An environment variable whose value groupcheck cannot use."""


@dataclass(frozen=True)
class Settings:
    """The environment's settings for targets (see the module docstring); the defaults are
    what an empty environment means."""

    broker: str = "groupcheck"
    #: the classpath of ``java:`` with none in the target string ('' when unset)
    kafka_classpath: str = ""
    #: the Maven local repository releases come from ('' means ``~/.m2/repository``)
    maven_repo: str = ""
    #: a Kafka distribution whose ``libs`` may hold a release ('' when unset)
    kafka_home: str = ""
    jsonl_timeout: float = DEFAULT_JSONL_TIMEOUT
    wire_trace: bool = False
    #: the nodes groupcheck's broker presents itself as for a wire group (0: the wire
    #: layer's default); a story that moves its coordinator is replayed on two
    broker_nodes: int = 0

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """The settings an environment gives (`SettingsError` on a value that is no
        number of seconds)."""
        timeout = DEFAULT_JSONL_TIMEOUT
        text = environ.get("GROUPCHECK_JSONL_TIMEOUT", "")
        if text:
            try:
                timeout = float(text)
            except ValueError:
                timeout = math.nan
            if not math.isfinite(timeout) or timeout <= 0:
                raise SettingsError(f"GROUPCHECK_JSONL_TIMEOUT={text}: not a positive number "
                                    "of seconds")
        return cls(broker=environ.get("GROUPCHECK_BROKER", "") or cls.broker,
                   kafka_classpath=environ.get("GROUPCHECK_KAFKA_CLASSPATH", ""),
                   maven_repo=environ.get("GROUPCHECK_MAVEN_REPO", ""),
                   kafka_home=environ.get("KAFKA_HOME", ""),
                   jsonl_timeout=timeout,
                   wire_trace=bool(environ.get("GROUPCHECK_WIRE_TRACE")))
