"""What an exception a member's poll() raised is about: `raised_error` reads the Kafka error
its text names and whether Kafka's client retries that error itself (`broker.faults`).

The clients spell an error differently: librdkafka by Kafka's name (``NOT_COORDINATOR``),
Kafka's Java client and kafka-python by a class named after it (``NotCoordinatorException``,
``NotCoordinatorError``), kafka-python also by its code (``[Error 16]``). A text that names
none of the coordinator's errors is an error the table does not classify ('').
"""

from __future__ import annotations

import re

from ...broker.faults import ERROR_CODES, RETRIABLE, error_name
from ...properties.group import RaisedError

__all__ = ["kafka_error", "raised_error"]

_CODE = re.compile(r"\[Error (\d+)\]")


def _camel(name: str) -> str:
    return "".join(word.capitalize() for word in name.split("_"))


_SPELLINGS = tuple((name, re.compile(rf"\b{name}\b|\b{_camel(name)}(?:Error|Exception)\b"))
                   for name in sorted(ERROR_CODES, key=len, reverse=True))


def kafka_error(text: str) -> str:
    """The coordinator error ``text`` names ('' for none of the table's)."""
    if (code := _CODE.search(text)) is not None and int(code.group(1)) in ERROR_CODES.values():
        return error_name(int(code.group(1)))
    return next((name for name, spelling in _SPELLINGS if spelling.search(text)), "")


def raised_error(member: str, text: str) -> RaisedError:
    error = kafka_error(text)
    return RaisedError(member, error, error in RETRIABLE, text)
