"""What the battery reports: findings, one result per engine, and the invariant × engine
table that ``groupcheck check`` prints."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INVARIANT_ROWS = ("I1", "I2", "I3", "I4a", "I5", "I6", "I7", "I8", "I9", "I10", "I11",
                  "PARITY", "ERROR", "TIMEOUT")
ENGINES = ("fuzz", "prove", "vectors", "codec", "scenario")
DEFAULT_SCOPE = "members=3,topics=2,partitions=1,generations=2,claims=2"
SMALL_SCOPE = "members=2,topics=2,partitions=2,generations=2,claims=2"
_ID = re.compile(r"\b(I\d+a?|ERROR|PARITY|TIMEOUT)\b")


def file_safe(name: str) -> str:
    """A target name fit for a file name (a jsonl: command has spaces and slashes)."""
    return re.sub(r"[^A-Za-z0-9._:-]+", "_", name)[:60]


def invariant_id(violation: str) -> str:
    found = _ID.search(violation)
    return found.group(1) if found else "ERROR"


@dataclass
class Finding:
    invariant: str
    violation: str
    file: str | None = None
    size: int | None = None  # events (fuzz) or members (assign inputs)
    detail: str = ""  # the counterexample, readable


@dataclass
class EngineResult:
    engine: str
    checked: tuple[str, ...] = ()
    seconds: float = 0.0
    runs: int = 0
    findings: dict[str, Finding] = field(default_factory=dict)
    #: violations that are Kafka's own behaviour (properties.kafka_rules): shown, not failed
    inherited: dict[str, Finding] = field(default_factory=dict)
    note: str = ""
    skipped: str = ""  # why the engine did not run

    def add(self, finding: Finding) -> None:
        self.findings.setdefault(finding.invariant, finding)

    @property
    def failed(self) -> bool:
        return bool(self.findings)


@dataclass
class BatteryResult:
    target: str
    engines: list[EngineResult]
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.engines)

    def first(self) -> tuple[EngineResult, Finding] | None:
        for e in self.engines:
            for inv in INVARIANT_ROWS:
                if inv in e.findings:
                    return e, e.findings[inv]
        return None

    def table(self) -> str:
        ran = [e for e in self.engines if not e.skipped]
        width = max([12] + [len(e.engine) + 2 for e in ran])
        lines = [f"check {self.target}  ({self.seconds:.1f}s)",
                 "invariant  " + "".join(f"{e.engine:<{width}}" for e in ran)]
        files: list[str] = []
        for inv in INVARIANT_ROWS:
            cells = []
            for e in ran:
                shown = e.findings.get(inv) or e.inherited.get(inv)
                if shown is not None:
                    files.append(f"  {inv} [{e.engine}]: {shown.violation}"
                                 + (f"\n      {shown.file}" if shown.file else ""))
                    cells.append("VIOLATED" if inv in e.findings else "Kafka's")
                elif inv in e.checked:
                    cells.append("holds")
                else:
                    cells.append("-")
            if any(c != "-" for c in cells):
                lines.append(f"{inv:<11}" + "".join(f"{c:<{width}}" for c in cells))
        lines.append("")
        for e in self.engines:
            state = f"skipped: {e.skipped}" if e.skipped else \
                f"{e.runs:,} runs in {e.seconds:.1f}s" + (f"; {e.note}" if e.note else "")
            lines.append(f"  {e.engine:<9} {state}")
        if files:
            lines.append("counterexamples:")
            lines += files
        kafka = sorted({i for e in self.engines for i in e.inherited})
        if kafka:
            lines.append(f"Kafka's: {', '.join(kafka)} broken the way Kafka's own client breaks "
                         "it (rules K1-K3; README 'Where groupcheck differs from Kafka'); "
                         "--strict fails on them")
        lines.append("VIOLATED" if self.failed else "every invariant held")
        return "\n".join(lines)


def save_json(directory: str | os.PathLike[str], stem: str, body: dict[str, Any]) -> str:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, indent=1, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = out / f"{file_safe(stem).replace(':', '-')}-{digest}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)
