"""`waybook label PATH NODE chosen|rejected [--reason TEXT]`: label a node chosen or rejected (preference
pairs for export --pairs).

The label is an Annotation record (type `waybook.preference`) on the node: the leaf does not move and
nothing enters the model context. `waybook export --pairs` reads it: at a fork, a branch with a `chosen`
label below the fork is paired with each sibling branch that is not chosen (rejected). With `--store URL`,
PATH is a journal id. The append is compare-and-append: a writer that moved on meanwhile is refused.

Example: waybook label session.jsonl c3d4 chosen --reason 'the correct fix'
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook._session import Session
from waybook.commands.common import emit_json
from waybook.commands.exits import OK, warn
from waybook.commands.ids import resolve_id
from waybook.commands.journal_files import EMPTY, check_journal_file, starts_with_header
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.export.trajectories import PREFERENCE
from waybook.journal import JsonlJournal
from waybook.model import Annotation, NotAJournalError
from waybook.projections import TreeProjection, replay


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "label", __doc__)
    parser.add_argument("path", type=Path, metavar="PATH", help="the journal file (with --store: its id)")
    parser.add_argument("node", metavar="NODE", help="the node's id (or a unique start of it)")
    parser.add_argument("label", choices=["chosen", "rejected"])
    parser.add_argument("--reason", default=None, help="why (kept with the label)")
    add_store_option(parser)
    add_json_option(parser, "print the record written as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.store is not None:
        store = connect_store(args.store)
        try:
            return _label(args, store.open(str(args.path)))
        finally:
            store.close()
    check_journal_file(args.path)
    if not starts_with_header(args.path):  # a label is appended: never to a file that is not a journal
        why = EMPTY if args.path.stat().st_size == 0 else "not a waybook header record"
        raise NotAJournalError(path=str(args.path), reason=why)
    journal = JsonlJournal(args.path)
    try:
        return _label(args, journal)
    finally:
        journal.close()


def _label(args: argparse.Namespace, journal: Any) -> int:
    tree = replay(TreeProjection(), journal)
    node = resolve_id(tree, args.node, what="NODE", path=args.path)
    data: dict[str, Any] = {"label": args.label}
    if args.reason:
        data["reason"] = args.reason
    result = Session(journal).append(Annotation(target=node, type=PREFERENCE, data=data))
    (record,) = result.records
    if args.json:
        emit_json(
            {"node": node, "label": args.label, "reason": args.reason, "seq": record.seq, "id": record.id}
        )
    else:
        warn(f"labelled {node} {args.label} (record {record.id}, seq {record.seq})")
    return OK
