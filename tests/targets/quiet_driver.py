"""A member driver (``python tests/targets/quiet_driver.py [--crash kill] [--no-create-ack]``)
whose consumers never reach a broker: it answers the contract's commands and nothing more, so a
test can kill it at a moment of its choosing while the harness waits on it. ``--crash kill``
makes its ``hello`` ask for a driver per member; ``--die-on-create`` answers no ``create``:
the driver SIGKILLs itself a moment later, while the harness waits for the ack. Its
``produce`` refuses topic ``refused`` at once and answers any other after `SLOW_PRODUCE`
seconds, on a thread of its own, so one record can fail while another is in flight."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

DIE_AFTER = 0.3  # seconds
SLOW_PRODUCE = 0.5  # seconds


def main(argv: list[str]) -> None:
    crash = "kill" if "--crash" in argv and "kill" in argv else "command"

    lock = threading.Lock()

    def write(message: dict[str, object]) -> None:
        with lock:
            print(json.dumps(message), flush=True)

    def produce(number: int, topic: str) -> None:
        if topic == "refused":
            write({"ack": number, "error": "this server does not host this topic-partition"})
        else:
            time.sleep(SLOW_PRODUCE)
            write({"ack": number})

    for line in sys.stdin:
        command = json.loads(line)
        number, cmd = command["id"], command["cmd"]
        if cmd == "hello":
            write({"ack": number, "client": "quiet", "version": "0", "assignors": ["range"],
                   "profile": "kip", "crash": crash})
        elif cmd == "create" and "--die-on-create" in argv:
            time.sleep(DIE_AFTER)
            os.kill(os.getpid(), signal.SIGKILL)
        elif cmd == "produce":
            threading.Thread(target=produce, args=(number, command["topic"]), daemon=True).start()
        elif cmd == "close":
            write({"event": "closed", "member": command["member"], "seq": 0,
                   "ts": time.monotonic_ns()})
            write({"ack": number})
        elif cmd == "shutdown":
            write({"ack": number})
            return
        else:
            write({"ack": number})


if __name__ == "__main__":
    main(sys.argv[1:])
