"""`waybook memory export-git MEMORY.jsonl DIR` and `waybook memory import-git DIR MEMORY.jsonl`.

With `--store URL`, MEMORY.jsonl is the id of a working-memory journal in that store.

Memory as a git repository (docs/memory-git.md): one commit per memory record out, commits made on the
repository back in as memory records through the Memory port's rules.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from waybook.commands.common import OK, USAGE, emit_json, guarded, open_journal, stdout, warn
from waybook.commands.memory_identity import add_identity_option, resolve
from waybook.commands.store_option import add_store_option, connect_store

ACTIONS: Final = ("export-git", "import-git")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="waybook memory", description="Memory as a git repository.")
    actions = parser.add_subparsers(title="actions", metavar="ACTION")
    out = actions.add_parser(
        "export-git",
        help="write a memory journal as a new git repository (one commit per record)",
        description=(
            "Write MEMORY.jsonl as a new git repository in DIR (missing or empty): one commit per memory "
            "record with trailers Waybook-Journal, Waybook-Seq and Waybook-Receipt, files under "
            "memories/, secrets redacted. The same journal always gives the same commit ids."
        ),
        epilog="Example: waybook memory export-git agent.memory.jsonl ./agent-memory",
    )
    out.add_argument("journal", type=Path, metavar="MEMORY.jsonl", nargs="?")
    out.add_argument("directory", type=Path, metavar="DIR")
    add_store_option(out, what="MEMORY.jsonl")
    add_identity_option(out)
    out.add_argument("--json", action="store_true")
    out.set_defaults(run=guarded(_export))
    back = actions.add_parser(
        "import-git",
        help="write commits made on an exported repository back as memory records",
        description=(
            "Write each commit made on top of the last exported commit in DIR into MEMORY.jsonl as one "
            "batch of memory records, through the Memory port's rules (paths, limits, read-only notes). "
            "Commits already imported are skipped."
        ),
        epilog="Example: waybook memory import-git ./agent-memory agent.memory.jsonl",
    )
    back.add_argument("directory", type=Path, metavar="DIR")
    back.add_argument("journal", type=Path, metavar="MEMORY.jsonl", nargs="?")
    add_store_option(back, what="MEMORY.jsonl")
    add_identity_option(back)
    back.add_argument("--json", action="store_true")
    back.set_defaults(run=guarded(_import))
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    if not hasattr(args, "run"):
        warn("give an action: export-git or import-git")
        return USAGE
    return int(args.run(args))


def _export(args: argparse.Namespace) -> int:
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
    from waybook.integrations.git_memory import import_git
    from waybook.journal import JsonlJournal

    resolve(args, "journal")
    if args.store is not None:
        from waybook.stores import StoreArgumentError

        with connect_store(args.store) as store:
            try:
                there = store.exists(str(args.journal))
            except StoreArgumentError as exc:
                warn(str(exc))
                return USAGE
            if not there:
                warn(f"{args.store}: no memory journal {str(args.journal)!r} in this store")
                return USAGE
            with store.open(str(args.journal)) as journal:
                report = import_git(args.directory, journal)
    elif not args.journal.is_file():
        warn(f"{args.journal}: no such memory journal")
        return USAGE
    else:
        with JsonlJournal(args.journal) as journal:
            report = import_git(args.directory, journal)
    if args.json:
        emit_json({"imported": list(report.imported), "skipped": list(report.skipped)})
    else:
        stdout().print(f"{len(report.imported)} commits imported, {len(report.skipped)} already imported")
    return OK
