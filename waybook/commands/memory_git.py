"""`waybook memory export-git MEMORY.jsonl DIR` and `waybook memory import-git DIR MEMORY.jsonl`: two
actions of `waybook memory` (commands.memory registers them as its sub-commands).

With `--store URL`, MEMORY.jsonl is the id of a working-memory journal in that store.

Memory as a git repository (docs/memory-git.md): one commit per memory record out, commits made on the
repository back in as memory records through the Memory port's rules.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json, open_journal, stdout
from waybook.commands.exits import OK, UsageError
from waybook.commands.journal_files import check_journal_file
from waybook.commands.memory_identity import add_identity_option, resolve
from waybook.commands.store_option import add_store_option, connect_store, store_errors
from waybook.commands.subcommand import add_command, add_json_option


def register(actions: argparse._SubParsersAction[Any]) -> None:
    """Add `export-git` and `import-git` to the actions of `waybook memory`. Their `--store` and `--json`
    default to SUPPRESS: `waybook memory` itself gives the defaults, so either may come before the action."""
    out = add_command(actions, "export-git", _export.__doc__)
    out.add_argument("journal", type=Path, metavar="MEMORY.jsonl", nargs="?")
    out.add_argument("directory", type=Path, metavar="DIR")
    add_store_option(out, ids="MEMORY.jsonl", default=argparse.SUPPRESS)
    add_identity_option(out, default=argparse.SUPPRESS)
    add_json_option(out, "the report as JSON", default=argparse.SUPPRESS)
    out.set_defaults(run=_export)
    back = add_command(actions, "import-git", _import.__doc__)
    back.add_argument("directory", type=Path, metavar="DIR")
    back.add_argument("journal", type=Path, metavar="MEMORY.jsonl", nargs="?")
    add_store_option(back, ids="MEMORY.jsonl", default=argparse.SUPPRESS)
    add_identity_option(back, default=argparse.SUPPRESS)
    add_json_option(back, "the report as JSON", default=argparse.SUPPRESS)
    back.set_defaults(run=_import)


def _only_git_options(args: argparse.Namespace) -> None:
    """`--at`, `--history` and `--cat` are options of `waybook memory PATH`, not of the git actions."""
    given = [f"--{name}" for name in ("at", "history", "cat") if getattr(args, name, None) is not None]
    if given:
        msg = f"{', '.join(given)}: an option of `waybook memory PATH`, not of the git actions"
        raise UsageError(msg)


def _export(args: argparse.Namespace) -> int:
    """`waybook memory export-git MEMORY.jsonl DIR`: write a memory journal as a new git repository (one
    commit per record).

    Write MEMORY.jsonl as a new git repository in DIR (missing or empty): one commit per memory record with
    trailers Waybook-Journal, Waybook-Seq and Waybook-Receipt, files under memories/, secrets redacted. The
    same journal always gives the same commit ids.

    Example: waybook memory export-git agent.memory.jsonl ./agent-memory
    """
    _only_git_options(args)
    from waybook.integrations.git_memory import export_git

    resolve(args, "journal")
    with open_journal(args.journal, args.store) as journal:
        report = export_git(journal, args.directory)
    if args.json:
        emit_json({"commits": report.commits, "redacted": report.redacted, "head": report.head})
    else:
        stdout().print(f"{report.commits} commits in {args.directory} ({report.redacted} secrets redacted)")
    return OK


def _import(args: argparse.Namespace) -> int:
    """`waybook memory import-git DIR MEMORY.jsonl`: write commits made on an exported repository back as
    memory records.

    Write each commit made on top of the last exported commit in DIR into MEMORY.jsonl as one batch of
    memory records, through the Memory port's rules (paths, limits, read-only notes). Commits already
    imported are skipped.

    Example: waybook memory import-git ./agent-memory agent.memory.jsonl
    """
    from waybook.integrations.git_memory import import_git
    from waybook.journal import JsonlJournal

    _only_git_options(args)
    resolve(args, "journal")
    if args.store is not None:
        with connect_store(args.store) as store:
            with store_errors():
                there = store.exists(str(args.journal))
            if not there:
                msg = f"{args.store}: no memory journal {str(args.journal)!r} in this store"
                raise UsageError(msg)
            with store.open(str(args.journal)) as journal:
                report = import_git(args.directory, journal)
    elif not args.journal.is_file():
        if args.journal.exists():
            check_journal_file(args.journal)  # a folder, a FIFO or a device: say which
        msg = f"{args.journal}: no such memory journal"
        raise UsageError(msg)
    else:
        with JsonlJournal(args.journal) as journal:
            report = import_git(args.directory, journal)
    if args.json:
        emit_json({"imported": list(report.imported), "skipped": list(report.skipped)})
    else:
        stdout().print(f"{len(report.imported)} commits imported, {len(report.skipped)} already imported")
    return OK
