"""`waybook diff PATH --leaf A --leaf B`: compare two branches.

Show the last entry two branches share and the entries each has after it.

Example: waybook diff session.jsonl --leaf a1b2 --leaf c3d4
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from waybook.commands.common import emit_json, open_journal, replay_with_progress, short_kind, stdout, summary
from waybook.commands.exits import UsageError
from waybook.commands.ids import resolve_id
from waybook.commands.journal_files import damage_status
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import plural
from waybook.journal import read_seqs, shown_records
from waybook.projections import TreeProjection


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "diff", __doc__)
    parser.add_argument(
        "--leaf",
        action="append",
        required=True,
        metavar="ID",
        help="give exactly two (ids or unique prefixes)",
    )
    add_json_option(parser, "machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if len(args.leaf) != 2:
        msg = "diff needs exactly two --leaf options"
        raise UsageError(msg)
    with open_journal(args.path, args.store) as journal:
        tree = replay_with_progress(TreeProjection(), journal)
        args.leaf = [resolve_id(tree, leaf, what="--leaf", path=args.path) for leaf in args.leaf]
        a, b = (tree.path_to(leaf) for leaf in args.leaf)
        shared = 0
        while shared < min(len(a), len(b)) and a[shared] == b[shared]:
            shared += 1
        fork = a[shared - 1] if shared else None
        sides = [a[shared:], b[shared:]]
        wanted = read_seqs(journal, sorted({tree.seq_of(n) for side in sides for n in side}))
        records = {r.id: r for r in shown_records(journal, wanted, pair_calls=False)}  # erased: placeholder
    _print(args, fork, shared, sides, records)
    return damage_status(journal)


def _print(
    args: argparse.Namespace, fork: str | None, shared: int, sides: list[list[str]], records: dict[str, Any]
) -> None:
    if args.json:
        emit_json(
            {
                "fork": fork,
                "shared": shared,
                "branches": [
                    {
                        "leaf": leaf,
                        "after_fork": [
                            {"id": n, "kind": records[n].kind, "seq": records[n].seq} for n in side
                        ],
                    }
                    for leaf, side in zip(args.leaf, sides, strict=True)
                ],
            }
        )
        return
    console = stdout()
    where = f"after {fork}" if fork else "from different roots"
    console.print(f"the branches share {plural(shared, 'entry', 'entries')} and diverge {escape(where)}")
    for leaf, side in zip(args.leaf, sides, strict=True):
        console.print(f"[bold]{escape(leaf)}[/bold]: {plural(len(side), 'entry', 'entries')} after the fork")
        for node in side:
            record = records[node]
            console.print(f"  {record.seq:>6} {short_kind(record.kind):<11} {escape(summary(record, 50))}")
