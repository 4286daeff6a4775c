"""A driver module for the fork server's tests: it says one line (the value of ``MARK`` in
its environment) and exits with code 3 at once, before its server can have told the harness
it was launched."""

import json
import os
import sys


def main() -> None:
    print(json.dumps({"event": "bye", "mark": os.environ.get("MARK")}), flush=True)
    sys.exit(3)
