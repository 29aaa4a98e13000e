"""`waybook memory PATH [--at SEQ] [--history FILE]`: memory files at a seq, or one file's history."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from waybook.commands import common
from waybook.commands.common import UsageError, emit_json, guarded, open_journal, seq_arg, stdout
from waybook.commands.ids import check_at
from waybook.commands.journal_files import damage_status
from waybook.commands.memory_identity import add_identity_option
from waybook.commands.memory_identity import resolve as resolve_identity
from waybook.commands.terminal import visible
from waybook.journal._roles.memory import MEMORY_ROLES
from waybook.memory.working._state import MemoryProjection
from waybook.projections import replay


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "memory",
        help="memory files at a seq, and a file's revision history",
        description=(
            "Show the files of a working-memory journal as they were at a seq (default: now), or with "
            "--history the revisions of one file: created, superseded, tombstoned, recreated, renamed, "
            "with the tool call that caused each, or with --cat the text of one file at that seq. Memory as "
            "a git repository: waybook memory export-git MEMORY.jsonl DIR, and waybook memory import-git "
            "DIR MEMORY.jsonl."
        ),
        epilog="Example: waybook memory agent.memory.jsonl --history /memories/notes.md",
    )
    parser.add_argument("path", type=Path, metavar="PATH", nargs="?")
    common.add_store_option(parser)
    add_identity_option(parser, what="PATH")
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="memory as it was at this seq")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--history", metavar="FILE", help="the revision history of one memory file")
    what.add_argument("--cat", metavar="FILE", help="the text of one memory file (at --at SEQ, default now)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=guarded(run))


def run(args: argparse.Namespace) -> int:
    resolve_identity(args, "path", what="PATH")
    with open_journal(args.path, args.store) as journal:
        check_at(args.at, journal.head().seq, path=args.path)
        state = replay(MemoryProjection(), journal, at=args.at)
    _print(args, state)
    return damage_status(journal)


def _print(args: argparse.Namespace, state: Any) -> None:
    if state.role not in MEMORY_ROLES:
        msg = (
            f"{args.path} is a {state.role or 'headerless'} journal, not a working-memory journal "
            f"(a memory journal's header declares one of the roles {', '.join(MEMORY_ROLES)})"
        )
        raise UsageError(msg)  # a profile error: the wrong journal was given (exit 2)
    console = stdout()
    if args.cat is not None:
        _cat(args, state)
        return
    if args.history is not None:
        revisions = state.revisions(args.history)
        if not revisions:
            msg = f"{args.history} has no history in {args.path}" + (
                f" up to seq {args.at}" if args.at else ""
            )
            raise UsageError(msg)
        if args.json:
            emit_json(
                [
                    {
                        "seq": r.seq,
                        "id": r.record_id,
                        "event": r.event,
                        "digest": r.digest,
                        "prior": r.prior,
                        "command": r.command,
                        "call_id": r.call_id,
                        "at": r.at,
                        "other_path": r.other_path,
                    }
                    for r in revisions
                ]
            )
            return
        table = Table(
            "seq",
            "event",
            "command",
            "call",
            "digest",
            title=escape(visible(args.history)),
            title_justify="left",
        )
        for r in revisions:
            event = f"{r.event} ({r.other_path})" if r.other_path else r.event
            digest = (r.digest or r.prior or "")[:12]
            table.add_row(
                str(r.seq), escape(visible(event)), r.command, escape(visible(r.call_id or "")), digest
            )
        console.print(table)
        return
    files = sorted(state.files.values(), key=lambda f: f.path)
    if args.json:
        emit_json(
            {
                "scope": state.scope,
                "seq": state.seq,
                "files": [
                    {
                        "path": f.path,
                        "bytes": f.size,
                        "digest": f.digest,
                        "written": f.written,
                        "revision": f.revision,
                    }
                    for f in files
                ],
            }
        )
        return
    table = Table(
        "path",
        "bytes",
        "written",
        title=f"scope {escape(visible(state.scope or ''))} at seq {state.seq}",
        title_justify="left",
    )
    for f in files:
        table.add_row(escape(visible(f.path)), str(f.size), str(f.written))
    console.print(table)


def _cat(args: argparse.Namespace, state: Any) -> None:
    """One file's text as it was at the seq; exactly its text when piped, made visible on a terminal."""
    file = state.files.get(args.cat)
    if file is None:
        at = f" at seq {state.seq}"
        known = ", ".join(sorted(state.files)[:10]) or "no files"
        msg = f"{args.cat}: no such memory file in {args.path}{at} (it has: {known})"
        raise UsageError(msg)
    if args.json:
        emit_json(
            {
                "path": file.path,
                "seq": state.seq,
                "digest": file.digest,
                "written": file.written,
                "text": file.text,
            }
        )
        return
    text = visible(file.text) if sys.stdout.isatty() else file.text
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
