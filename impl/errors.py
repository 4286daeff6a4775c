"""Typed errors raised by `groupcheck.impl`.

Each error names the Kafka exception it stands for, so that the JSON-lines service can
answer ``"<Class>: <message>"`` the way Kafka's client would.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["AssignorError", "CodecError", "InvalidRequestError"]


class CodecError(ValueError):
    """Malformed consumer-protocol bytes (Kafka: ``SchemaException``).

    ``offset`` is the byte position where reading failed, ``field`` the field being read,
    ``version`` the schema version in use (``None`` before the header was read).
    """

    def __init__(self, message: str, *, offset: int, field: str, version: int | None,
                 kafka_class: str = "SchemaException") -> None:
        self.reason = message
        self.kafka_class = kafka_class
        self.offset = offset
        self.field = field
        self.version = version
        where = f"offset {offset}, field {field}"
        if version is not None:
            where += f", version {version}"
        super().__init__(f"{message} ({where})")


class AssignorError(Exception):
    """An assignor refused its input (Kafka: ``IllegalStateException`` and friends)."""

    kafka_class: ClassVar[str] = "IllegalStateException"


class InvalidRequestError(ValueError):
    """A JSON-lines request that is not of the contract's form."""

    kafka_class = "IllegalArgumentException"
