"""``groupcheck broker``: groupcheck's own Kafka broker on loopback, for a person.

    groupcheck broker [--port N] [--topic NAME:PARTITIONS ...] [--no-auto-create]
                      [--partitions N] [--initial-rebalance-delay-ms MS]
                      [--min-session-timeout-ms MS] [--quiet]

Prints ``bootstrap HOST:PORT`` first, then one line per request as it is answered (time,
connection, member, API and version, outcome, steering) and a ``VIOLATION`` line for every
broker-side verdict that fails. Runs until interrupted (Ctrl-C or SIGTERM), then prints a
summary. Topics: those given with ``--topic``, and any topic a client's Metadata request
names (created with ``--partitions`` partitions, 1 by default) unless ``--no-auto-create``.
Exit codes: 0 after an interruption with every verdict holding, 1 when a verdict failed,
2 bad arguments or a port that cannot be bound (one line).
"""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
import threading
from typing import Any

from ..impl.assign_op import INT32_MAX
from .shared import NO_ENVIRONMENT, Environment, UsageError, command_parser, int_between

__all__ = ["register"]


def _topic(text: str) -> tuple[str, int]:
    name, sep, count = text.rpartition(":")
    if not sep or not name or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME:PARTITIONS (partitions ≥ 1)")
    return name, int(count)


def _loopback(host: str) -> str:
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise argparse.ArgumentTypeError(f"{host!r}: the broker listens on loopback only")
    return host


def register(sub: Any) -> None:
    p = command_parser(sub, "broker", "run groupcheck's broker on loopback until interrupted",
                       [(0, "stopped (Ctrl-C, SIGTERM) with every verdict holding"),
                        (1, "stopped, and a broker-side verdict failed"),
                        (2, "also: a port that cannot be bound")])
    p.add_argument("--port", metavar="N",
                   type=int_between(0, 65535), default=9092,
                   help="port to listen on (0: any free; default %(default)s)")
    p.add_argument("--host", metavar="HOST",
                   type=_loopback, default="127.0.0.1",
                   help="a loopback address (default %(default)s)")
    p.add_argument("--topic", type=_topic, action="append", default=[],
                   metavar="NAME:PARTITIONS", help="create this topic at start (repeatable)")
    p.add_argument("--partitions", metavar="N",
                   type=int_between(1, INT32_MAX), default=1,
                   help="partitions of a topic created on a client's Metadata request")
    p.add_argument("--no-auto-create", action="store_true",
                   help="create no topic on Metadata requests")
    p.add_argument("--initial-rebalance-delay-ms", metavar="MS",
                   type=int_between(0, INT32_MAX), default=0,
                   help="group.initial.rebalance.delay.ms (Kafka's default is 3000)")
    p.add_argument("--min-session-timeout-ms", metavar="MS",
                   type=int_between(0, INT32_MAX), default=6000,
                   help="group.min.session.timeout.ms")
    p.add_argument("--quiet", action="store_true", help="no line per request")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    try:  # the broker's protocol library is optional (the broker extra)
        from ..broker import Broker, BrokerConfig, Exchange
        from ..broker.store import MAX_TOPIC_PARTITIONS
    except ImportError as e:
        raise UsageError(f"the broker needs kio: pip install 'groupcheck[broker]' ({e})"
                         ) from None

    for option, count in [("--partitions", args.partitions), *(
            (f"--topic {name}", n) for name, n in args.topic)]:
        if count > MAX_TOPIC_PARTITIONS:
            raise UsageError(f"{option}: {count:,} partitions, more than the "
                               f"{MAX_TOPIC_PARTITIONS:,} a topic may have here")

    def show(exchange: Exchange) -> None:
        if not args.quiet:
            print(exchange.line(), flush=True)
        for verdict in exchange.verdicts:
            for message in verdict.messages:
                print(f"VIOLATION group {verdict.group} generation {verdict.generation}: "
                      f"{message}", flush=True)

    config = BrokerConfig(host=args.host, port=args.port, topics=dict(args.topic),
                          auto_create_partitions=None if args.no_auto_create
                          else args.partitions,
                          initial_rebalance_delay_ms=args.initial_rebalance_delay_ms,
                          min_session_timeout_ms=args.min_session_timeout_ms)
    broker = Broker(config, listener=show)
    try:
        broker.start()
    except OSError as e:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror}") from None
    stop = threading.Event()
    # both, explicitly: a process started in the background of a script inherits SIGINT
    # ignored, and would otherwise never stop on it
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print(f"bootstrap {broker.bootstrap}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    served, failed = len(broker.exchanges()), broker.violations()
    broker.close()
    print(f"stopped: {served} requests served, {len(failed)} failed verdicts", file=sys.stderr)
    return 1 if failed else 0
