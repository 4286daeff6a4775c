"""What an exception a member's poll() raised is about: `raised_error` reads the Kafka error
its text names and whether Kafka's client retries that error itself (`broker.faults`).

The clients spell an error differently: librdkafka by Kafka's name (``NOT_COORDINATOR``),
Kafka's Java client and kafka-python by a class named after it (``NotCoordinatorException``,
``NotCoordinatorError``), kafka-python also by its code (``[Error 16]``). A text that names
none of the coordinator's errors is an error the table does not classify ('').

An exception whose type is one of a language's own errors (`INTERNAL`: Java's
IllegalStateException or NullPointerException, Python's AssertionError or KeyError,
JavaScript's TypeError) and that names no Kafka error is of the client's own making: the
harness's application subscribes before it polls and passes valid arguments, so none of
these is the application's doing. Kafka's Java consumer documents IllegalStateException from
poll() only for a consumer neither subscribed nor assigned.
"""

from __future__ import annotations

import re

from ...broker.faults import ERROR_CODES, RETRIABLE, error_name
from ...properties.group import RaisedError
from ...properties.raised_rules import exception_type

__all__ = ["INTERNAL", "kafka_error", "raised_error"]

_CODE = re.compile(r"\[Error (\d+)\]")
#: the languages' own errors: a programming error, never a Kafka client's answer to its user
INTERNAL = frozenset({
    # Java
    "IllegalStateException", "NullPointerException", "IllegalArgumentException",
    "ConcurrentModificationException", "ClassCastException", "IndexOutOfBoundsException",
    "ArrayIndexOutOfBoundsException", "NoSuchElementException", "ArithmeticException",
    "UnsupportedOperationException",
    # Python
    "AssertionError", "AttributeError", "KeyError", "IndexError", "TypeError", "NameError",
    "UnboundLocalError", "ZeroDivisionError", "RecursionError",
    # JavaScript
    "ReferenceError", "RangeError",
})


def _camel(name: str) -> str:
    """The class name's stem: Kafka's Java client drops an authorization error's ``Failed``
    (GROUP_AUTHORIZATION_FAILED is GroupAuthorizationException)."""
    return "".join(word.capitalize() for word in name.removesuffix("_FAILED").split("_")) \
        + ("(?:Failed)?" if name.endswith("_FAILED") else "")


_SPELLINGS = tuple((name, re.compile(rf"\b{name}\b|\b{_camel(name)}(?:Error|Exception)\b"))
                   for name in sorted(ERROR_CODES, key=len, reverse=True))


def kafka_error(text: str) -> str:
    """The coordinator error ``text`` names ('' for none of the table's)."""
    if (code := _CODE.search(text)) is not None and int(code.group(1)) in ERROR_CODES.values():
        return error_name(int(code.group(1)))
    return next((name for name, spelling in _SPELLINGS if spelling.search(text)), "")


def raised_error(member: str, text: str) -> RaisedError:
    error = kafka_error(text)
    return RaisedError(member, error, error in RETRIABLE, text,
                       internal=not error and exception_type(text) in INTERNAL)
