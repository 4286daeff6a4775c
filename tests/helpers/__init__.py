"""What the test modules share, one module per subject (the golden vectors, Kafka's jars and
releases, the wire stories and findings, raw clients of groupcheck's broker, the environment
the tests run in, the command line run in this process), and two places in the checkout:
`ROOT`, and `TARGETS` (``tests/targets/``: the assignors, services and drivers the tests
check, named by path or, with that folder on ``sys.path`` as pyproject.toml puts it for
pytest, by module)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ROOT / "tests" / "targets"
