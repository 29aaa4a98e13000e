"""`waybook fork PATH NODE -o OUT`: fork a session into a new journal at a node.

Write a new journal whose history is PATH's up to NODE, copied verbatim, behind a header that names PATH's
journal and NODE's seq and digest. PATH is not changed.

Example: waybook fork session.jsonl a1b2 -o retry.jsonl

The fork is `Session.fork` into a journal in memory, validated whole, then written in one atomic step.
With `--store URL`, PATH and OUT are journal ids in that store.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook._files import create_atomically
from waybook._session import Session
from waybook.commands.common import emit_json, open_journal
from waybook.commands.exits import OK, UsageError
from waybook.commands.ids import resolve_id
from waybook.commands.store_option import add_store_option, connect_store, import_into_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.journal import InMemoryJournal
from waybook.projections import TreeProjection, replay


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "fork", __doc__)
    parser.add_argument("path", type=Path, metavar="PATH")
    parser.add_argument("node", metavar="NODE", help="the node to fork at (an id or a unique prefix)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="the new journal's file (or id)")
    add_store_option(parser, ids="PATH (and OUT)")
    add_json_option(parser, "machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    out = str(args.output)
    journal_id = out if args.store is not None else Path(out).stem
    if args.store is None and Path(out).exists():
        msg = f"-o {out}: already exists; choose a new file for the fork; nothing was written"
        raise UsageError(msg)
    with open_journal(args.path, args.store) as source:
        tree = replay(TreeProjection(), source)
        node = resolve_id(tree, args.node, what="NODE", path=args.path)
        staging = InMemoryJournal(out)
        fork = Session(source).fork(node, staging, journal_id=journal_id)
    lines = list(staging.read_lines())
    if args.store is None:
        if not create_atomically(Path(out), b"".join(line + b"\n" for line in lines)):
            msg = f"-o {out}: created by someone else meanwhile; nothing was written"
            raise UsageError(msg)
    else:
        with connect_store(args.store) as store:
            if store.exists(out):
                msg = f"-o {out}: already a journal in {args.store}; choose a new id; nothing was written"
                raise UsageError(msg)
            import_into_store(store, out, staging)
    (header,) = staging.read(limit=1)
    point = header.body.metadata["forked_from"]  # type: ignore[union-attr]
    if args.json:
        emit_json({"output": out, "records": len(lines), "leaf": fork.leaf, "forked_from": point})
    else:
        print(f"{out}: forked {point['journal']} at {node} (seq {point['seq']}), {len(lines)} records")
    return OK
