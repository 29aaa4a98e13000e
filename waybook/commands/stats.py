"""`waybook stats PATH [--json]` (or `--store URL [ID]`): turns, tool calls, tokens, latency, per branch."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from waybook import stores
from waybook.commands.common import emit_json, open_journal, stdout
from waybook.commands.exits import OK, PROBLEM, UsageError
from waybook.commands.ids import short_ids
from waybook.commands.journal_files import damage_status
from waybook.commands.store_option import add_store_option, connect_store
from waybook.projections import SessionStats, Tally, session_stats


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "stats",
        help="summarise a session: turns, tool calls, tokens by model, latency, per branch",
        description=(
            "Summarise a session journal: user turns, assistant replies, tool calls by tool and tool errors, "
            "tokens by model (as the assistant turns recorded them) and reply latency percentiles (from the "
            "journal's timestamps), for the whole tree and for each branch. With --store URL and no id, "
            "every session journal of the store, and their sum."
        ),
        epilog="Example: waybook stats session.jsonl --json",
    )
    parser.add_argument(
        "path", nargs="?", type=Path, metavar="PATH", help="a journal file, or an id with --store"
    )
    add_store_option(parser, detail="; with no PATH, every session journal of the store")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.path is None and args.store is None:
        msg = "give a journal PATH, or --store URL (with an id, or none for every session journal)"
        raise UsageError(msg)
    if args.path is not None:
        journal = open_journal(args.path, args.store)
        with journal:
            stats = session_stats(list(journal.read()))
            status = damage_status(journal)
        show({str(args.path): stats}, as_json=args.json)
        return status
    with connect_store(args.store) as store:
        every: dict[str, SessionStats] = {}
        cursor = None
        while True:
            page = store.list(role="session", after=cursor, limit=500)
            for info in page:
                with stores.open_journal(store, info.journal_id) as journal:
                    every[info.journal_id] = session_stats(list(journal.read()))
            cursor = page.cursor
            if cursor is None:
                break
    show(every, as_json=args.json)
    return OK if every else PROBLEM


def show(every: dict[str, SessionStats], *, as_json: bool) -> None:
    if as_json:
        emit_json({name: stats.as_json() for name, stats in every.items()})
        return
    out = stdout()
    for name, stats in every.items():
        out.print(f"[bold]{escape(name)}[/bold]: {stats.records} records, {len(stats.branches)} branches")
        table = Table(box=None, pad_edge=False, show_edge=False)
        for column in ("", "turns", "replies", "tool calls", "errors", "tokens in/out", "latency p50/p99"):
            table.add_column(column, justify="left" if not column else "right", overflow="fold")
        table.add_row("total", *cells(stats.total))
        short = short_ids([b.leaf for b in stats.branches])
        for branch in stats.branches:
            label = ("* " if branch.active else "  ") + short[branch.leaf]
            table.add_row(label, *cells(branch.tally), style=None if branch.active else "dim")
        out.print(table)
        for model, counts in stats.total.tokens.items():
            shown = ", ".join(f"{key} {value:,}" for key, value in counts.items())
            out.print(f"  {escape(model)}: {escape(shown)}")
        if stats.total.tool_calls:
            shown = ", ".join(f"{tool} {n}" for tool, n in stats.total.tool_calls.items())
            out.print(f"  tools: {escape(shown)}")


def cells(tally: Tally) -> list[str]:
    inputs = sum(c.get("input_tokens", 0) for c in tally.tokens.values())
    outputs = sum(c.get("output_tokens", 0) for c in tally.tokens.values())
    latency = "-" if tally.latency is None else f"{tally.latency['p50']:.1f}s/{tally.latency['p99']:.1f}s"
    return [
        str(tally.turns),
        str(tally.replies),
        str(sum(tally.tool_calls.values())),
        str(tally.tool_errors),
        f"{inputs:,}/{outputs:,}",
        latency,
    ]
