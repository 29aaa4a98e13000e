"""`waybook memory [show] PATH [--at SEQ] [--history FILE | --cat FILE]`, `export-git`, `import-git`, `sync`:
memory files at a seq, a file's revision history; memory as a git repository.

Show the files of a working-memory journal as they were at a seq (default: now), or with --history the
revisions of one file: created, superseded, tombstoned, recreated, renamed, with the tool call that caused
each, or with --cat the text of one file at that seq. Memory as a git repository: waybook memory export-git
MEMORY.jsonl DIR, and waybook memory import-git DIR MEMORY.jsonl.

Example: waybook memory agent.memory.jsonl --history /memories/notes.md

`memory` is a command with actions (commands.memory_git, commands.memory_sync). The word after it names an
action, or else it is the PATH of the default action, `show`: `waybook memory M.jsonl --at 3` is `waybook
memory show M.jsonl --at 3`. The options of `show` may also come before PATH (`waybook memory --store URL
ID`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs
from rich.markup import escape
from rich.table import Table

from waybook.commands import memory_git, memory_sync
from waybook.commands.common import emit_json, open_journal, seq_arg, stdout
from waybook.commands.exits import UsageError
from waybook.commands.ids import check_at
from waybook.commands.journal_files import damage_status
from waybook.commands.memory_identity import add_identity_option
from waybook.commands.memory_identity import resolve as resolve_identity
from waybook.commands.store_option import add_store_option
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import visible
from waybook.journal._roles.memory import MEMORY_ROLES
from waybook.memory.working import MemoryProjection, Revision
from waybook.projections import replay

SHOW: Final = "show"
SYNOPSIS: Final = (
    "waybook memory [show] PATH [--store URL] [--at SEQ] [--history FILE | --cat FILE] [--json]\n"
    "       waybook memory export-git MEMORY.jsonl DIR [--store URL] [--json]\n"
    "       waybook memory import-git DIR MEMORY.jsonl [--store URL] [--json]\n"
    "       waybook memory sync (MEMORY.jsonl | --identity ID) --remote URL [--store URL] [--json]"
)

if TYPE_CHECKING:
    _Actions = argparse._SubParsersAction[argparse.ArgumentParser]
else:
    _Actions = argparse._SubParsersAction


class PathOrAction(_Actions):
    """The actions of `waybook memory`: a first word that names no action is the PATH of `show`.

    Any word may be a PATH, so argparse's check of the word against the action names is left out (no
    choices); `__call__` tells an action from a path and hands the words to that action's parser."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = None  # type: ignore[assignment]  # typeshed: always the names

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [values] if isinstance(values, str) else list(values or ())
        if not words or words[0] not in self._name_parser_map:
            words.insert(0, SHOW)
        super().__call__(parser, namespace, words, option_string)


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "memory", __doc__, usage=SYNOPSIS)
    view_options(parser, default=None)  # before PATH: `waybook memory --store URL ID`
    actions = parser.add_subparsers(
        action=PathOrAction, title="actions", metavar="PATH | ACTION", prog=parser.prog
    )
    parser.set_defaults(run=run, path=None)  # `waybook memory --identity ID` names no PATH
    show = add_command(actions, SHOW, run.__doc__)
    show.add_argument("path", type=Path, metavar="PATH", nargs="?")
    view_options(show, default=argparse.SUPPRESS)  # given after PATH, or else as given before it
    show.set_defaults(run=run)
    memory_git.register(actions)
    memory_sync.register(actions)


def view_options(parser: argparse.ArgumentParser, *, default: Any) -> None:
    """The options of `show`, on `memory` itself (with defaults) and on `show` (default SUPPRESS, so an
    option given before PATH is not overwritten by show's default)."""
    add_store_option(parser, default=default)
    add_identity_option(parser, what="PATH", default=default)
    parser.add_argument(
        "--at", type=seq_arg, metavar="SEQ", default=default, help="memory as it was at this seq"
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--history", metavar="FILE", default=default, help="the revision history of one memory file"
    )
    what.add_argument(
        "--cat", metavar="FILE", default=default, help="the text of one memory file (at --at SEQ)"
    )
    flag = False if default is None else default
    add_json_option(parser, "machine-readable output", default=flag)


def run(args: argparse.Namespace) -> int:
    """`waybook memory show PATH [--at SEQ] [--history FILE | --cat FILE]`: the default action: `waybook
    memory PATH` shows the memory files of PATH.

    The files of a working-memory journal at a seq (default: now), with --history the revisions of one
    file, or with --cat its text at that seq. `waybook memory PATH` is short for this.

    Example: waybook memory show agent.memory.jsonl --cat /memories/notes.md
    """
    if args.history is not None and args.cat is not None:
        msg = "choose one of --history FILE and --cat FILE"
        raise UsageError(msg)
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
            emit_json([_revision_json(r) for r in revisions])
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


def _revision_json(revision: Revision) -> dict[str, Any]:
    """A revision as `--history FILE --json` prints it: every field, `record_id` named `id`."""
    fields = attrs.asdict(revision)
    fields["id"] = fields.pop("record_id")
    return fields


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
