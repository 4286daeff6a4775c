"""An audit's parameters (`AuditConfig`), how its scenarios are cut into chunks, and the
error for bad arguments or a mismatched output folder (`AuditError`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TypedDict

__all__ = ["RUN_FORMAT", "AuditConfig", "AuditError", "RunParams"]

RUN_FORMAT = "groupcheck-audit-run/1"


class RunParams(TypedDict):
    """What an audit's output folder records of the run, to resume it."""

    format: str
    targets: list[str]
    scenarios: int
    seed: int
    chunk_size: int
    corpus: str | None
    reference: str | None


class AuditError(Exception):
    """A problem with the audit's arguments or output folder (exit code 2)."""


@dataclass
class AuditConfig:
    """What an audit runs (targets, scenarios, seed or corpus) and how (master, chunks)."""

    targets: list[str]
    scenarios: int = 100_000
    seed: int = 0
    master: str | None = None  # None: local[*], or spark-submit's --master
    out: str = "audit-out"
    chunk_size: int = 0  # 0: about 20 chunks, at least 2,000 scenarios each
    slices: int = 0  # Spark partitions per chunk; 0: one per core (at least 2)
    corpus: str | None = None
    in_flight: int = 0  # chunks run at once; 0: pipeline.IN_FLIGHT
    #: a target whose reproduction of a violation labels it (``evidence``), e.g. ``java:``
    reference: str | None = None
    shrink_seconds: float = 60.0  # shrinking the smallest examples, on the driver
    extra_conf: dict[str, str] = field(default_factory=dict)

    def run_params(self) -> RunParams:
        """What must match for a rerun to resume (master and slices may change)."""
        return {"format": RUN_FORMAT, "targets": list(self.targets),
                "scenarios": self.scenarios, "seed": self.seed,
                "chunk_size": self.effective_chunk_size(),
                "corpus": os.path.abspath(self.corpus) if self.corpus else None,
                "reference": self.reference}

    def effective_chunk_size(self) -> int:
        if self.chunk_size > 0:
            return self.chunk_size
        return max(2000, -(-self.scenarios // 20))

    def chunks(self) -> list[tuple[int, int, int]]:
        size = self.effective_chunk_size()
        return [(i, lo, min(self.scenarios, lo + size))
                for i, lo in enumerate(range(0, self.scenarios, size))]
