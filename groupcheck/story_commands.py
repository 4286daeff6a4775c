"""``groupcheck shrink``, and ``groupcheck replay`` of audit stories and of pictures
(``--html``; the rest of ``replay`` is ``membership_commands``'s).

    groupcheck shrink FILE [--target T] [--budget S] [--out FILE] [--invariant I]

What each takes (decided here, README "Commands"):

* ``groupcheck-audit-chain/1`` — a counterexample of the audit (``counterexamples/``,
  ``inherited/``) or of ``check``'s scenarios engine: its story is shrunk by delta debugging
  (``audit/shrink.py``) while the same invariant breaks the same way (its own violation, or
  the same Kafka rule's) on the target; the output is the same format, so ``replay``,
  ``shrink`` and ``audit --corpus`` read it;
* ``groupcheck-audit-spec/1`` — a bare story (e.g. ``tests/data/rack_aware_flap_spec.json``),
  shrunk the same way, on the failure it shows first;
* ``groupcheck-replay/1`` — a state-machine replay file: its events are shrunk by
  ``model/shrink.py`` on a fresh group of the target per try.

Files of one assign request (``prove``, the zoo's scenarios, ``diff``) are refused: they are
already within the prover's small scope. A target is any registry target with an assign
function (``builtin:``, ``mutant:``, ``python:``, ``kafka-python:``, ``jsonl:``) or an audit
``pyfn:`` target; by default the one the file names.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli_values import positive_seconds
from .membership_commands import CommandError

CHAIN_FORMAT = "groupcheck-audit-chain/1"
SPEC_FORMAT = "groupcheck-audit-spec/1"
REPLAY_FORMAT = "groupcheck-replay/1"
DEFAULT_BUDGET = 60.0


def read_story_file(path: str) -> dict[str, Any]:
    """The JSON object in ``path`` (one line on a bad file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise CommandError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CommandError(f"{path} must hold one JSON object")
    return data


def story_of(data: dict[str, Any], path: str) -> dict[str, Any]:
    """The story (spec) of an audit chain record or a bare spec."""
    if data.get("format") == CHAIN_FORMAT and isinstance(data.get("spec"), dict):
        spec: dict[str, Any] = data["spec"]
        return spec
    if data.get("format") == SPEC_FORMAT or (data.get("kind") == "random"
                                            and isinstance(data.get("members"), list)):
        return data
    if isinstance(data.get("members"), dict) or "groupcheck" in data:
        raise CommandError(f"{path} is one assign request (prove, scenario or diff): it is "
                           "already within the prover's scope; shrink takes audit, scenarios "
                           "and state-machine replay files")
    raise CommandError(f"{path} is neither an audit story ({CHAIN_FORMAT}, {SPEC_FORMAT}) "
                       f"nor a state-machine replay file ({REPLAY_FORMAT})")


def open_story_target(name: str, assignor: str | None = None
                      ) -> tuple[Any, Callable[[], None]]:
    """An ``audit.targets.AuditTarget`` for ``name`` (a ``jsonl:`` target runs
    ``assignor``) and the function that closes it."""
    if name.startswith("pyfn:"):
        from .audit.targets import AuditTargetError, resolve_plugin

        try:
            return resolve_plugin(name), lambda: None
        except AuditTargetError as exc:
            raise CommandError(str(exc)) from None
    from .scenario_engine import story_target
    from .targets.registry import TargetError, resolve

    try:
        target = resolve(name, assignor=assignor)
    except TargetError as exc:
        raise CommandError(str(exc)) from None
    if target.assign is None or target.assignor is None:
        target.close()
        raise CommandError(f"{name} has no assign function: a story needs one")
    return story_target(target), target.close


def _story_and_target(args: argparse.Namespace, data: dict[str, Any]
                      ) -> tuple[dict[str, Any], tuple[Any, Callable[[], None]]]:
    """The file's story and the target to run it on (``--target``, else the file's; a
    ``jsonl:`` target runs the assignor the file's requests name)."""
    spec = story_of(data, args.file)
    name = args.target or data.get("target")
    if not name:
        raise CommandError(f"{args.file} names no target: give --target")
    assignor = getattr(args, "assignor", None) or data.get("assignor")
    return spec, open_story_target(str(name), assignor if isinstance(assignor, str) else None)


def _failure(data: dict[str, Any], invariant: str | None) -> Any:
    """The failure to keep: ``--invariant``, else the one the file records (with its Kafka
    rule if it was labelled), else None (the first the story shows)."""
    from .audit.shrink import Failure

    inv = invariant or (data.get("invariant") if data.get("format") == CHAIN_FORMAT else None)
    if inv is None or inv == "none":
        return None
    inv = {"I4a": "I4"}.get(str(inv), str(inv))
    rule = (data.get("inherited_from_kafka") or {}).get(inv) if not invariant else None
    return Failure(str(inv), rule)


def _shrink_story(args: argparse.Namespace, data: dict[str, Any]) -> int:
    from .audit.chain import replay_record
    from .audit.shrink import ShrinkError, shrink_story
    from .scenario_engine import describe

    spec, (target, close) = _story_and_target(args, data)
    failure = _failure(data, args.invariant)
    reference, close_reference = _reference(args.reference, target.assignor, failure)
    try:
        result = shrink_story(spec, target, failure, seconds=args.budget,
                              reference=reference)
    except ShrinkError as exc:
        raise CommandError(f"shrink: {exc}") from None
    finally:
        close()
        close_reference()
    record = replay_record(target, result.spec, result.chain, spec.get("scenario", -1),
                           spec.get("seed"))
    record["invariant"] = result.failure.invariant
    record["shrink"] = result.summary()
    out = _write(args, record)
    b, a = result.before, result.after
    print(f"shrunk {result.failure.text()} on {target.name} from {b['members']} members, "
          f"{b['partitions']} partitions, {b['rounds']} rebalance(s) -> {a['members']} "
          f"members, {a['partitions']} partitions, {a['rounds']} rebalance(s) "
          f"({result.runs} runs, {result.seconds:.1f}s, "
          f"{'1-minimal' if result.complete else 'stopped by --budget'})")
    print(describe(result.spec))
    print(result.chain.violations[0] if result.chain.violations else "")
    print(f"written: {out}")
    return 0


def _reference(name: str | None, assignor: str, failure: Any
               ) -> tuple[Any, Callable[[], None]]:
    """The ``--reference`` story target running ``assignor`` (``java:`` and ``builtin:``
    take it), or None; a failure labelled from evidence needs one."""
    from .properties.deviations import EVIDENCE

    if name is None:
        if failure is not None and failure.rule == EVIDENCE:
            raise CommandError("shrink: the file's violation was labelled from a reference's "
                               "evidence; give --reference (e.g. java:)")
        return None, lambda: None
    if name in ("builtin", "builtin:"):
        name = f"builtin:{assignor}"
    return open_story_target(name, assignor)


def _group_factory(name: str, assignor: str | None = None) -> Callable[[], Any]:
    """Fresh groups of the target ``name`` (for state-machine replay files)."""
    from .targets.registry import TargetError, resolve

    try:
        target = resolve(name, assignor=assignor)
    except TargetError as exc:
        raise CommandError(str(exc)) from None
    if target.group is None:
        raise CommandError(f"{name} is not a group target (it has no assignor)")
    return target.group


def _shrink_events(args: argparse.Namespace, data: dict[str, Any]) -> int:
    from .model.replay import replay_events
    from .model.shrink import invariant_of, minimize

    name = args.target or data["target"]
    factory = _group_factory(name, args.assignor)
    wanted = args.invariant or invariant_of((data.get("violations") or [""])[0])
    started = time.perf_counter()
    events, violations = minimize(list(data["events"]), factory, wanted,
                                  seconds=args.budget)
    if not violations:
        raise CommandError(f"shrink: the events do not show {wanted or 'a violation'} on "
                           f"{name}")
    record = {**data, "target": name, "events": events, "violations": violations,
              "shrink": {"from": len(data["events"]), "to": len(events),
                         "seconds": round(time.perf_counter() - started, 3)}}
    out = _write(args, record)
    print(f"shrunk {wanted} on {name} from {len(data['events'])} to {len(events)} events")
    print("\n".join(replay_events(factory(), events).story))
    print(f"written: {out}")
    return 0


def _write(args: argparse.Namespace, record: dict[str, Any]) -> Path:
    out = Path(args.out) if args.out else Path(args.file).with_suffix(".shrunk.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def is_story(data: dict[str, Any]) -> bool:
    """An audit or scenarios counterexample, or a bare story."""
    return data.get("format") in (CHAIN_FORMAT, SPEC_FORMAT) or (
        data.get("kind") == "random" and isinstance(data.get("members"), list))


def cmd_replay(args: argparse.Namespace) -> int:
    """``groupcheck replay``: stories here; a state-machine file here too when ``--html``
    asks for its picture; anything else (and a state-machine file without ``--html``) in
    ``membership_commands``."""
    from .membership_commands import cmd_replay as replay_saved

    data = read_story_file(args.file)
    if is_story(data):
        return replay_story(args, data)
    if args.html and data.get("format") == REPLAY_FORMAT:
        return _replay_events_drawn(args, data)
    if args.html:
        raise CommandError("--html draws audit and scenarios stories and state-machine "
                           "replay files")
    return replay_saved(args)


def _replay_events_drawn(args: argparse.Namespace, data: dict[str, Any]) -> int:
    """A state-machine replay file, run once: its story printed, its timeline drawn."""
    from .audit.picture import events_timeline, html_page, svg
    from .model.replay import replay_events

    if not isinstance(data.get("events"), list):
        raise CommandError(f"cannot replay {args.file}: it has no events")
    name = args.target or data["target"]
    events = data["events"]
    outcome = replay_events(_group_factory(name, getattr(args, "assignor", None))(), events)
    print(f"replaying {args.file} ({len(events)} events) on {name}")
    print("\n".join(outcome.story))
    timeline = events_timeline(f"{args.file} on {name}", events[:len(outcome.views)],
                               outcome.views, outcome.violations)
    _write_html(args.html, html_page(f"groupcheck replay {args.file}", [svg(timeline)],
                                     "\n".join(outcome.story)))
    if outcome.violations:
        print(f"reproduced: {outcome.violations[0]}")
        return 1
    print("did not reproduce: every invariant held")
    return 0


def _write_html(path: str, page: str) -> None:
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
    print(f"picture: {path}")


def replay_story(args: argparse.Namespace, data: dict[str, Any]) -> int:
    """``groupcheck replay`` of an audit or scenarios file, or a bare story: exit 1 when
    the recorded invariant (any, for a bare story) breaks again."""
    from .audit.chain import replay_record, run_chain
    from .scenario_engine import describe

    spec, (target, close) = _story_and_target(args, data)
    try:
        chain = run_chain(target, spec)
    finally:
        close()
    record = replay_record(target, spec, chain, spec.get("scenario", -1), spec.get("seed"))
    wanted = _failure(data, None)
    if wanted is not None:
        record["invariant"] = wanted.invariant
    print(f"replaying {args.file} on {target.name}\n{describe(spec)}")
    print("\n".join(_rounds_text(record)))
    if args.html:
        from .audit.picture import chain_timeline, html_page, svg

        _write_html(args.html, html_page(f"groupcheck replay {args.file}",
                                         [svg(chain_timeline(record))], describe(spec)))
    broken = chain.violated if wanted is None else chain.verdicts.get(wanted.invariant) == 1
    if broken:
        print(f"reproduced: {record['violations'][0]}")
        return 1
    print("did not reproduce: every invariant held" if not chain.violated else
          f"did not reproduce {wanted.invariant if wanted else ''}; other violations: "
          f"{chain.violations[0]}")
    return 0


def _rounds_text(record: dict[str, Any]) -> list[str]:
    """One line per assign call: who got what, and what nobody got."""
    lines = []
    rebalance = 0
    for request, response, follow in zip(record["requests"], record["responses"],
                                         record["follow_ups"], strict=True):
        rebalance += follow == 0
        label = f"R{rebalance}" + (f" follow-up {follow}" if follow else "")
        if "error" in response:
            lines.append(f"  {label}: {response['error']}")
            continue
        given = response.get("assignment", {})
        held = " | ".join(f"{m}: " + (" ".join(f"{t}-{p}" for t, p in ps) or "-")
                          for m, ps in given.items())
        owned = {(t, p) for ps in given.values() for t, p in ps}
        wanted = {(t, p) for t, n in request["partitions"].items() for p in range(n)
                  if any(t in v["topics"] for v in request["members"].values())}
        left = sorted(wanted - owned)
        lines.append(f"  {label} (gen {response.get('generation')}): {held}"
                     + (f" | nobody: {' '.join(f'{t}-{p}' for t, p in left)}" if left
                        else ""))
    return lines


def cmd_shrink(args: argparse.Namespace) -> int:
    data = read_story_file(args.file)
    if data.get("format") == REPLAY_FORMAT:
        return _shrink_events(args, data)
    return _shrink_story(args, data)


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``shrink``; and ``replay`` (made by ``membership_commands``) learns stories and
    ``--html``."""
    replay = sub.choices["replay"]
    replay.add_argument("--html", default=None, metavar="OUT",
                        help="also write the counterexample's ownership timeline (an SVG "
                             "page) to OUT")
    replay.set_defaults(func=cmd_replay)
    p = sub.add_parser("shrink", help="make a saved counterexample smaller while it still "
                                      "fails the same way (delta debugging)")
    p.add_argument("file", help="an audit or scenarios counterexample, a story, or a "
                                "state-machine replay file")
    p.add_argument("--target", default=None, help="default: the target the file names")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds (default %(default)s)")
    p.add_argument("--out", default=None, help="default: FILE with .shrunk.json")
    p.add_argument("--assignor", default=None,
                   help="which assignor a jsonl: target runs (default: the file's)")
    p.add_argument("--invariant", default=None,
                   help="the invariant to keep broken (default: the file's)")
    p.add_argument("--reference", default=None, metavar="T",
                   help="label each candidate's violations from T's evidence (java: runs "
                        "the story's assignor on Kafka's client): a violation T reproduced "
                        "shrinks only to stories T still reproduces")
    p.set_defaults(func=cmd_shrink)
