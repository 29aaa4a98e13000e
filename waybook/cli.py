"""The `waybook` command. Exit codes: 0 ok, 1 a problem was found, 2 usage error."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from waybook._version import __version__

SIGPIPE_EXIT = 128 + 13
"""What a shell reports for a process ended by SIGPIPE, as `seq 1 1000000 | head` does."""


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    # The PostgreSQL pool logs each failed connection attempt; the command reports the outcome once.
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    if given[:1] == ["memory"] and given[1:2] and given[1] in ("export-git", "import-git"):
        from waybook.commands import memory_git  # `waybook memory ACTION ...` (docs/memory-git.md)

        return memory_git.main(given[1:])
    if given[:2] == ["memory", "sync"]:
        from waybook.commands import memory_sync  # `waybook memory sync --remote URL` (docs/memory-git.md)

        return memory_sync.main(given[2:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return 2
    try:
        status = int(args.run(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError:
        # The reader stopped reading (`waybook log J | head`): end quietly, as Unix tools do, and keep
        # the interpreter from complaining when it flushes stdout on exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return SIGPIPE_EXIT
    return status


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
