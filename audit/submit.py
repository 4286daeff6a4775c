"""Entry point for ``spark-submit``: ``groupcheck audit`` with the cluster's master.

    spark-submit --master spark://host:7077 --py-files groupcheck.zip \\
        audit/submit.py --scenarios 1000000 --out /shared/audit

A launcher, not a module of the pipeline: spark-submit runs this file as a script, and it
hands its arguments to the command line (``python -m groupcheck audit …``), which must be
importable on the driver (installed, or in the ``--py-files`` zip). It imports nothing of
groupcheck itself, so the audit floor never depends on the command line above it.
"""

from __future__ import annotations

import runpy
import sys

if __name__ == "__main__":
    sys.argv[1:1] = ["audit"]
    runpy.run_module("groupcheck", run_name="__main__", alter_sys=True)
