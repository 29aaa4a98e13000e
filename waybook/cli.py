"""The `waybook` command. Exit codes: 0 ok, 1 a problem was found, 2 usage error."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from waybook._version import __version__
from waybook.commands.exits import USAGE, run_guarded

SIGPIPE_EXIT = 128 + 13
"""What a shell reports for a process ended by SIGPIPE, as `seq 1 1000000 | head` does."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: the process's arguments) and return its exit status.

    Never raises for a caller's mistake, and never exits: tests call it in-process as `main([...])`.
    """
    given = list(sys.argv[1:] if argv is None else argv)
    _quiet_pool_logs()
    parser = build_parser()
    try:
        args = parser.parse_args(given)
    except SystemExit as exc:  # argparse has said why: --help and --version (0), or a usage error (2)
        return exc.code if isinstance(exc.code, int) else USAGE
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return USAGE
    try:
        status = run_guarded(args.run, args)  # every command: one line and an exit code for an error
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError:
        # The reader stopped reading (`waybook log J | head`): end quietly, as Unix tools do, and keep
        # the interpreter from complaining when it flushes stdout on exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return SIGPIPE_EXIT
    return status


def _quiet_pool_logs() -> None:
    """The PostgreSQL pool logs each failed connection attempt; the command reports the outcome once."""
    logger = logging.getLogger("psycopg")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="waybook",
        description="Audit, export and repair agent session journals.",
        epilog="Example: waybook verify session.jsonl",
    )
    parser.add_argument("--version", action="version", version=f"waybook {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    from waybook.commands import register_all

    register_all(commands)
    return parser


if __name__ == "__main__":
    sys.exit(main())
