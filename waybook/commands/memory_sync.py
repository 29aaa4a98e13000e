"""`waybook memory sync [--remote URL] (--identity ID | MEMORY.jsonl)`: push memory to a git remote and pull
reviewed commits back.

Push a working-memory journal to a git remote as a repository (export-git, secrets redacted) and pull back
commits reviewers made on its main branch (import-git, through the Memory port's rules). When both sides
changed, nothing is merged: the conflict is reported (exit 1).

Example: waybook memory sync --identity coder --remote git@example.com:me/memory.git

Without `--remote`, the remote this memory last synced with (recorded in its own sync repository, never
the current directory's git remote); a memory that never synced is a usage error naming `--remote`
(docs/memory-git.md, "Sync with a remote").

Exit codes: 0 synced, 1 a typed conflict or a refused push (nothing merged), 2 a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json, stdout
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.journal_files import check_journal_file
from waybook.commands.memory_identity import add_identity_option
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.journal import SessionJournal


def register(actions: argparse._SubParsersAction[Any]) -> None:
    """Add `sync` to the actions of `waybook memory`; its shared options default to SUPPRESS, so they
    may come before the action too."""
    parser = add_command(actions, "sync", __doc__)
    parser.add_argument("journal", type=Path, metavar="MEMORY.jsonl", nargs="?")
    parser.add_argument(
        "--remote",
        metavar="URL",
        default=None,
        help=(
            "the git remote (a URL or a path); default: the remote this memory last synced with (never "
            "the current directory's git remote)"
        ),
    )
    add_store_option(parser, ids="MEMORY.jsonl", default=argparse.SUPPRESS)
    add_identity_option(parser, default=argparse.SUPPRESS)
    add_json_option(parser, "machine-readable output", default=argparse.SUPPRESS)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from waybook.integrations.git_sync import NoRemoteError, SyncConflictError, sync_git

    with _journal(args) as journal:
        try:
            report = sync_git(journal, args.remote)
        except NoRemoteError as exc:
            msg = (
                f"no remote is known for memory {exc.journal_id}: it never synced with one. Give --remote "
                "URL (the first sync records it, and later syncs use it)"
            )
            raise UsageError(msg) from None
        except SyncConflictError as exc:
            if args.json:
                emit_json({"status": "conflict", "kind": exc.kind, "remote": exc.remote, "error": str(exc)})
            warn(str(exc))
            return PROBLEM
    if args.json:
        emit_json(
            {
                "status": report.status,
                "pushed": report.pushed,
                "imported": list(report.imported),
                "remote_head": report.remote_head,
                "redacted": report.redacted,
            }
        )
    else:
        stdout().print(
            f"{report.status}: {report.pushed} commits pushed, {len(report.imported)} commits imported "
            f"({report.redacted} secrets redacted)"
        )
    return OK


@contextlib.contextmanager
def _journal(args: argparse.Namespace) -> Iterator[SessionJournal]:
    """The journal to sync: the identity's working memory (created on first use), a journal of
    `--store`, or a journal file."""
    if (args.identity is None) == (args.journal is None):
        msg = "give MEMORY.jsonl or --identity ID (exactly one)"
        raise UsageError(msg)
    if args.identity is not None:
        from waybook.memory import RequestError, home

        try:
            mine = home(args.identity, store=args.store)
        except RequestError as exc:
            msg = f"--identity: {exc}"
            raise UsageError(msg) from None
        with mine:
            yield mine.working
        return
    if args.store is not None:
        with connect_store(args.store) as store:
            if not store.exists(str(args.journal)):
                msg = f"{args.store}: no memory journal {str(args.journal)!r} in this store"
                raise UsageError(msg)
            with store.open(str(args.journal)) as journal:
                yield journal
        return
    if not args.journal.is_file():
        if args.journal.exists():
            check_journal_file(args.journal)  # a folder, a FIFO or a device: say which
        msg = f"{args.journal}: no such memory journal"
        raise UsageError(msg)
    from waybook.journal import JsonlJournal

    with JsonlJournal(args.journal) as journal:
        yield journal
