"""`waybook stats PATH [--json]` (or `--store URL [ID]`, or `--by day|model|project|session`): summarise a
session: turns, tool calls, tokens and cost by model, latency, per branch.

Summarise a session journal: user turns, assistant replies, tool calls by tool and tool errors, tokens by
model (as the assistant turns recorded them) and their cost, and reply latency percentiles (from the journal's
timestamps), for the whole tree and for each branch. With --store URL and no id, every session journal of the
store. With --by, a cost report instead: input, output, cache write and cache read tokens and their cost in
USD, by day, model, project or session (each request priced at its model's rates on its day, from Pydantic's
genai-prices table: pip install 'waybook[prices]'); a model without a price is listed, never priced as zero.

Example: waybook stats session.jsonl --json
Example: waybook stats --store file:sessions --by day --since 2026-02-01 --json
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.markup import escape

from waybook import stores
from waybook.commands.common import emit_json, open_journal, stdout
from waybook.commands.cost_report import (
    add_cost_options,
    check_cost_options,
    cost_by_model,
    price_table,
    run_report,
)
from waybook.commands.exits import OK, PROBLEM, UsageError
from waybook.commands.ids import short_ids
from waybook.commands.journal_files import damage_status
from waybook.commands.plain_table import Column, Row, print_table
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.projections import CostReport, SessionStats, Tally, session_stats


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "stats", __doc__)
    parser.add_argument(
        "path", nargs="?", type=Path, metavar="PATH", help="a journal file, or an id with --store"
    )
    add_store_option(parser, detail="; with no PATH, every session journal of the store")
    add_json_option(parser, "one JSON object")
    parser.add_argument(
        "--harness",
        action="store_true",
        help="count harness entries (Claude Code's caveats and command wrappers, ...) as turns too; "
        "by default they are left out and counted apart (harness_entries)",
    )
    add_cost_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.path is None and args.store is None:
        msg = "give a journal PATH, or --store URL (with an id, or none for every session journal)"
        raise UsageError(msg)
    check_cost_options(args)
    if args.by is not None:
        return run_report(args)
    prices = price_table()
    costs: dict[str, CostReport] = {}
    if args.path is not None:
        journal = open_journal(args.path, args.store)
        with journal:
            records = list(journal.read())
            stats = session_stats(records, harness=args.harness)
            costs[str(args.path)] = cost_by_model(records, prices)
            status = damage_status(journal)
        show({str(args.path): stats}, costs, as_json=args.json)
        return status
    with connect_store(args.store) as store:
        every: dict[str, SessionStats] = {}
        cursor = None
        while True:
            page = store.list(role="session", after=cursor, limit=500)
            for info in page:
                with stores.open_journal(store, info.journal_id) as journal:
                    records = list(journal.read())
                    every[info.journal_id] = session_stats(records, harness=args.harness)
                    costs[info.journal_id] = cost_by_model(records, prices)
            cursor = page.cursor
            if cursor is None:
                break
    show(every, costs, as_json=args.json)
    return OK if every else PROBLEM


HEADERS = ("", "turns", "replies", "tool calls", "errors", "tokens in/out", "latency p50/p99")
"""The table's columns: the branch, then its counts (right-justified)."""


def show(every: dict[str, SessionStats], costs: dict[str, CostReport], *, as_json: bool) -> None:
    if as_json:
        emit_json({name: stats.as_json() | {"cost": costs[name].as_json()} for name, stats in every.items()})
        return
    out = stdout()
    for name, stats in every.items():
        out.print(f"[bold]{escape(name)}[/bold]: {stats.records} records, {len(stats.branches)} branches")
        columns = [Column(header, right=bool(header)) for header in HEADERS]
        short = short_ids([b.leaf for b in stats.branches])
        rows = [Row(["total", *cells(stats.total)])]
        rows.extend(
            Row([("* " if b.active else "  ") + short[b.leaf], *cells(b.tally)], dim=not b.active)
            for b in stats.branches
        )
        print_table(out, columns, rows)
        priced = {row.key: row for row in costs[name].rows}
        for model, counts in stats.total.tokens.items():
            shown = ", ".join(f"{key} {value:,}" for key, value in counts.items())
            cost = priced[model].cost if model in priced else None
            spent = "" if cost is None else f" (${cost.total:,.4f})"
            out.print(f"  {escape(model)}: {escape(shown)}{spent}")
        if stats.total.tool_calls:
            shown = ", ".join(f"{tool} {n}" for tool, n in stats.total.tool_calls.items())
            out.print(f"  tools: {escape(shown)}")
        if stats.total.harness:
            out.print(f"  harness entries (not counted; --harness counts them): {stats.total.harness:,}")


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
