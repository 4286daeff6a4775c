"""Entry point for ``spark-submit``: ``groupcheck audit`` with the cluster's master.

    spark-submit --master spark://host:7077 --py-files groupcheck.zip \\
        audit/submit.py --scenarios 1000000 --out /shared/audit

Imports ``groupcheck`` absolutely (this file runs as a script, outside the package), so the
package must be importable on the driver: installed, or in the ``--py-files`` zip.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    from groupcheck.audit_command import main

    sys.exit(main())
