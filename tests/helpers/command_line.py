"""A groupcheck command run in this process, as the tests of one command need it: the
command's exit code, and its errors raised (not turned into exit 2 as `groupcheck.cli.main`
does), so that a test can expect the exact error."""

from __future__ import annotations

from groupcheck.cli import build_parser


def run_command(argv: list[str]) -> int:
    """Parse ``argv`` (``["diff", "--target", …]``) with the command line's own parser and
    run the command it names; its exit code."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))
