"""`waybook stats --by day|model|project|session`: what the sessions' model requests cost.

The options, reading the journals (one, or every session journal of a store) and the output; the
report itself is `waybook.projections.cost_report`, priced by `waybook.prices.GenaiPrices` (the
`prices` extra). Without genai-prices, tokens are reported and every cost is null, with a warning
naming the extra.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from datetime import UTC, date, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rich.markup import escape
from rich.table import Table

from waybook.commands.common import emit_json, open_journal, stdout
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.journal_files import damage_status
from waybook.commands.store_option import connect_store
from waybook.model import Record
from waybook.prices import GenaiPrices, PricesMissingError
from waybook.projections import (
    CostReport,
    CostRow,
    PriceTable,
    Tokens,
    UsageEntry,
    cost_report,
    usage_entries,
)

_DAY = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})")


def day_arg(text: str) -> date:
    """`--since`/`--until`: a day as YYYY-MM-DD (or YYYYMMDD, as ccusage takes it)."""
    match = _DAY.fullmatch(text)
    msg = f"{text!r} is not a day; give YYYY-MM-DD, such as 2026-02-10"
    if match is None:
        raise argparse.ArgumentTypeError(msg)
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise argparse.ArgumentTypeError(msg) from None


def timezone_arg(text: str) -> tzinfo:
    """`--timezone`: an IANA time zone name (UTC, Europe/Berlin, ...)."""
    if text.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        msg = f"{text!r} is not a time zone this system knows; give an IANA name such as Europe/Berlin or UTC"
        raise argparse.ArgumentTypeError(msg) from None


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by",
        choices=("day", "model", "project", "session"),
        help="report tokens and cost (USD, genai-prices) grouped by day, model, project or session",
    )
    parser.add_argument("--since", type=day_arg, metavar="DAY", help="with --by: from this day (YYYY-MM-DD)")
    parser.add_argument("--until", type=day_arg, metavar="DAY", help="with --by: to this day, inclusive")
    parser.add_argument(
        "--timezone", type=timezone_arg, metavar="ZONE", help="with --by: the days' time zone (default UTC)"
    )


def check_cost_options(args: argparse.Namespace) -> None:
    if args.by is None:
        given = [
            flag
            for flag, value in (
                ("--since", args.since),
                ("--until", args.until),
                ("--timezone", args.timezone),
            )
            if value is not None
        ]
        if given:
            msg = f"{' and '.join(given)} filter a cost report: add --by day|model|project|session"
            raise UsageError(msg)
    elif args.since is not None and args.until is not None and args.since > args.until:
        msg = f"--since {args.since} is after --until {args.until}: nothing could be reported"
        raise UsageError(msg)


def price_table() -> PriceTable | None:
    """genai-prices' table, or None (with a warning naming the extra) when it is not installed."""
    try:
        return GenaiPrices()
    except PricesMissingError as exc:
        warn(f"{exc}; costs are left out (null)")
        return None


def report(entries: list[UsageEntry], prices: PriceTable | None, args: argparse.Namespace) -> CostReport:
    return cost_report(
        entries,
        by=args.by,
        prices=None if prices is None else prices.name,
        timezone=args.timezone or UTC,
        since=args.since,
        until=args.until,
    )


def run_report(args: argparse.Namespace) -> int:
    """The report for one journal (PATH, or an id with --store) or for every session journal of a store."""
    prices = price_table()
    if args.path is not None:
        journal = open_journal(args.path, args.store)
        with journal:
            entries = list(usage_entries(journal.read(), prices=prices))
            status = damage_status(journal)
        show_report(report(entries, prices, args), as_json=args.json)
        return status
    entries = []
    journals = 0
    for records in store_sessions(args.store):
        journals += 1
        entries.extend(usage_entries(records, prices=prices))
    show_report(report(entries, prices, args), as_json=args.json)
    return OK if journals else PROBLEM


def store_sessions(url: str) -> Iterator[Iterator[Record]]:
    """The records of every session journal of the store at `url`, one journal at a time."""
    with connect_store(url) as store:
        cursor = None
        while True:
            page = store.list(role="session", after=cursor, limit=500)
            for info in page:
                with store.open(info.journal_id) as journal:
                    yield journal.read()
            cursor = page.cursor
            if cursor is None:
                break


def money(row: CostRow) -> str:
    cost = row.cost
    if cost is None:
        return "-"
    return f"${cost.total:,.2f}" + ("*" if row.unpriced else "")


def _cells(tokens: Tokens) -> list[str]:
    return [f"{tokens.input:,}", f"{tokens.output:,}", f"{tokens.cache_write:,}", f"{tokens.cache_read:,}"]


def show_report(found: CostReport, *, as_json: bool) -> None:
    if as_json:
        emit_json(found.as_json())
        return
    out = stdout()
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in (found.by.upper(), "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "COST"):
        table.add_column(column, justify="left" if column == found.by.upper() else "right", overflow="fold")
    for row in found.rows:
        table.add_row(escape(row.key), *_cells(row.tokens), money(row))
        if found.by != "model":
            for model in row.models:
                cost = "-" if model.cost is None else f"${model.cost.total:,.2f}"
                table.add_row(f"  {escape(model.model)}", *_cells(model.tokens), cost, style="dim")
    table.add_row("total", *_cells(found.total.tokens), money(found.total), style="bold")
    out.print(table)
    missing = [m for m in found.total.models if m.cost is None]
    if found.prices is None:
        out.print("costs: no price table (pip install 'waybook[prices]')")
        return
    if missing:
        shown = ", ".join(f"{escape(m.model)} ({m.tokens.total:,} tokens)" for m in missing)
        out.print(f"* not priced ({escape(found.prices)} has no price for it): {shown}")
    out.print(f"prices: {escape(found.prices)}, standard rates; each request at its model's rates on its day")


def cost_by_model(records: list[Record], prices: PriceTable | None) -> CostReport:
    """One journal's cost by model, for the summary `waybook stats PATH` prints."""
    return cost_report(
        usage_entries(records, prices=prices), by="model", prices=None if prices is None else prices.name
    )
