"""`waybook import pi PATH -o OUT.jsonl [--lenient]`: turn a foreign session file into a waybook journal."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.codecs.pi import import_pi
from waybook.commands.common import OK, UsageError, guarded, import_into_store, warn
from waybook.commands.terminal import plural
from waybook.journal import GENESIS, InMemoryJournal
from waybook.journal.fileio import create_atomically


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "import",
        help="import a foreign session file (Pi) as a new journal",
        description=(
            "Import a Pi session file (versions 1-3) into a new JSONL journal. Leaf moves Pi keeps only in "
            "memory are made explicit. Lines that do not parse are refused with their line numbers unless "
            "--lenient skips them. The journal is validated in full before one atomic write."
        ),
        epilog="Example: waybook import pi ~/.pi/agent/sessions/x.jsonl -o x.waybook.jsonl",
    )
    parser.add_argument("source", choices=["pi"], help="the format of the file")
    parser.add_argument("path", type=Path, metavar="PATH")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, metavar="OUT", help="the new journal file"
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="import into this store (created if missing); OUT is then the new journal's id",
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip lines that do not parse, and say how many"
    )
    parser.set_defaults(run=guarded(run))


def run(args: argparse.Namespace) -> int:
    if not args.path.is_file():
        msg = f"{args.path}: " + (
            "is a directory, not a Pi session file" if args.path.is_dir() else "no such file"
        )
        raise UsageError(msg)
    if args.store is None and args.output.exists():
        msg = f"{args.output}: already exists; choose a new file for the journal"
        raise UsageError(msg)
    imported = import_pi(args.path.read_bytes(), lenient=args.lenient)
    staging = InMemoryJournal(str(args.output))
    staging.append(
        list(imported.records), expected=GENESIS
    )  # every rule is checked before any byte is written
    if args.store is not None:
        import_into_store(args.store, str(args.output), staging)
    elif not create_atomically(args.output, b"".join(line + b"\n" for line in staging.read_lines())):
        msg = f"{args.output}: created by someone else meanwhile; nothing was written"
        raise UsageError(msg)
    warn(
        f"imported {plural(len(imported.records), 'record')} from a Pi v{imported.version} session "
        f"into {args.output}"
    )
    if imported.joined:
        lines = ", ".join(str(n) for n in imported.joined[:10])
        warn(
            f"{plural(len(imported.joined), 'line')} held two entries (a concurrent write); "
            f"imported both: line {lines}"
        )
    if imported.skipped:
        lines = ", ".join(str(n) for n, _ in imported.skipped[:10])
        warn(f"skipped {plural(len(imported.skipped), 'unparseable line')} (--lenient): {lines}")
    return OK
