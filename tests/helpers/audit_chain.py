"""What the audit chain tests share: the path of tests/audit_targets.py, whose broken
targets they load as ``pyfn:`` plugins."""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
BROKEN = os.path.join(HERE, "audit_targets.py")
