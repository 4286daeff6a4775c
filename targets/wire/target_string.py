"""The ``wire:`` target string: which clients, which assignor, adversarial or not."""

from __future__ import annotations

from ..target import TargetError

__all__ = ["wire_clients"]

ADVERSARIAL = ":adversarial"


def wire_clients(spec: str) -> tuple[tuple[str, ...], str, bool]:
    """``<client>|mixed:<a>+<b>…|cmd=<command>`` ``:<assignor>[:adversarial]`` (what follows
    ``wire:``) → clients, assignor, adversarial. A command may hold colons: the assignor is
    the last field."""
    adversarial = spec.endswith(ADVERSARIAL)
    body = spec[:-len(ADVERSARIAL)] if adversarial else spec
    clients_part, sep, assignor = body.rpartition(":")
    if not sep or not clients_part or not assignor:
        raise TargetError(f"wire: expected wire:<client>:<assignor>[:adversarial], "
                          f"wire:mixed:<a>+<b>…:<assignor> or wire:cmd=<command>:<assignor>, "
                          f"not wire:{spec}")
    if clients_part.startswith("mixed:"):
        clients = tuple(c for c in clients_part[len("mixed:"):].split("+") if c)
        if len(clients) < 2:
            raise TargetError("wire: a mixed group names at least two clients (a+b)")
    else:
        clients = (clients_part,)
    return clients, assignor, adversarial
