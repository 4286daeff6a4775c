"""Audit targets: what the pipeline runs on each scenario chain.

An `AuditTarget` is a plain function ``assign(request) -> response`` (the JSON-lines
``assign`` op: the request names ``assignor``; the response has ``assignment``,
``generation`` and ``protocol``), the assignor family whose clients build the requests
(``range``, ``roundrobin``, ``sticky`` or ``cooperative-sticky``: it decides the client-mode
subscriptions and which invariants apply), and optionally a codec for I10.

This floor does not import the implementation (audit/ imports model, targets and properties
only: docs/explanation/architecture.md). ``builtin:<assignor>`` is therefore resolved by a
*resolver* the caller hands in — the command line's resolves it to ``impl.assign_op.run_assign``
— and the pipeline ships the resolver (a module-level function, pickled by reference) to the
executors, which resolve every target name there. `resolve_plugin` handles the kind every
resolver shares:

``pyfn:<module>:<attr>`` or ``pyfn:<file.py>:<attr>`` — a Python callable
``request -> response``; its optional attributes ``assignor`` (default ``range``) and
``codec`` (an object with ``encode_subscription(x, version) -> bytes``,
``decode_subscription(data) -> message`` and ``error``, the exception class of a malformed
input) say how to drive it. A file is shipped to the executors with ``SparkContext.addFile``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..properties.codec import Message, SubscriptionInput
from ..properties.jsonl_shapes import AssignFn

__all__ = ["ASSIGNOR_FAMILIES", "DEFAULT_TARGETS", "AssignFn", "AuditTarget", "AuditTargetError",
           "Codec", "Resolver", "assignor_of", "plugin_file", "reference_name", "resolve_cached",
           "resolve_plugin"]

ASSIGNOR_FAMILIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
DEFAULT_TARGETS = tuple(f"builtin:{a}" for a in ASSIGNOR_FAMILIES)


class Codec(Protocol):
    """The subscription codec of a target (I10)."""

    error: type[Exception]

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes: ...

    def decode_subscription(self, data: bytes) -> Message: ...


@dataclass(frozen=True)
class AuditTarget:
    name: str
    assignor: str
    assign: AssignFn
    codec: Codec | None = None

    @property
    def sticky(self) -> bool:
        """The sticky family promises balance (I3) and stickiness (I4a)."""
        return self.assignor in ("sticky", "cooperative-sticky")


Resolver = Callable[[str], AuditTarget]


class AuditTargetError(ValueError):
    """A target string that names nothing the audit can run."""


def _load_file(path: str) -> Any:
    if not os.path.isfile(path):
        try:  # on an executor: the driver shipped it with SparkContext.addFile
            from pyspark import SparkFiles

            shipped = SparkFiles.get(os.path.basename(path))
        except Exception:  # noqa: BLE001 - no Spark here: the path is simply missing
            shipped = ""
        if not os.path.isfile(shipped):
            raise AuditTargetError(f"no such file: {path}")
        path = shipped
    name = "groupcheck_audit_plugin_" + os.path.basename(path).removesuffix(".py")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AuditTargetError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def plugin_file(target: str) -> str | None:
    """The local file a ``pyfn:`` target loads (to ship to executors), else None."""
    kind, _, rest = target.partition(":")
    where, _, _ = rest.rpartition(":")
    return os.path.abspath(where) if kind == "pyfn" and where.endswith(".py") else None


def resolve_plugin(target: str) -> AuditTarget:
    """``pyfn:<module or file.py>:<attr>`` → an `AuditTarget`."""
    kind, _, rest = target.partition(":")
    where, _, attr = rest.rpartition(":")
    if kind != "pyfn" or not where or not attr:
        raise AuditTargetError(f"unknown target {target!r}; expected builtin:<assignor> or "
                               "pyfn:<module or file.py>:<function>")
    try:
        module = _load_file(where) if where.endswith(".py") else importlib.import_module(where)
    except ImportError as exc:
        raise AuditTargetError(f"{target}: cannot import {where}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise AuditTargetError(f"{target}: {where} has no callable {attr!r}")
    assignor = str(getattr(fn, "assignor", "range"))
    if assignor not in ASSIGNOR_FAMILIES:
        raise AuditTargetError(f"{target}: assignor {assignor!r} is not one of "
                               f"{', '.join(ASSIGNOR_FAMILIES)}")
    return AuditTarget(target, assignor, fn, getattr(fn, "codec", None))


_CACHE: dict[tuple[Any, str], AuditTarget] = {}


def resolve_cached(resolver: Resolver, name: str) -> AuditTarget:
    """Resolve once per process (executors resolve every batch)."""
    key = (resolver, name)
    if key not in _CACHE:
        _CACHE[key] = resolver(name)
    return _CACHE[key]


def reference_name(reference: str, assignor: str) -> str:
    """The target string of ``reference`` running ``assignor``."""
    if reference.startswith("java:"):
        return f"{assignor}@{reference}"
    if reference in ("builtin", "builtin:"):
        return f"builtin:{assignor}"
    return reference


def assignor_of(target: str) -> str:
    """The assignor a target string names: ``<assignor>@java:…`` or ``builtin:<assignor>``."""
    return target.partition("@")[0] if "@" in target else target.partition(":")[2]
