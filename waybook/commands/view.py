"""`waybook view PATH -o OUT.html`: write a session as one self-contained HTML page.

Write one HTML file that shows the session: its branches (abandoned ones greyed, never hidden), every leaf
move and its reason, tool calls paired with their results, memory used per turn, usage and cost per turn, and
the chain's proof. The sub-agent sessions it links are in the same page (the <journal>.jsonl files beside
PATH, or the store's journals), opened at the call that started them. Harness entries (progress lines, hooks)
are hidden behind a count until asked. The page loads nothing from the network and runs nothing from the
session. A damaged journal shows its proven prefix and where the damage starts.

Example: waybook view session.jsonl -o session.html
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from waybook._files import replace_private
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.journal_files import open_proven_file, subagent_file
from waybook.commands.store_option import connect_store, store_errors
from waybook.commands.subcommand import add_journal_command
from waybook.journal import VerifyReport
from waybook.model import JournalError, Record
from waybook.projections import PriceTable
from waybook.stores import JournalStore, StoreError
from waybook.view import installed_prices, journal_page_data, page_data, render_page, with_subagents


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "view", __doc__)
    parser.add_argument(
        "-o", "--output", type=Path, required=True, metavar="OUT.html", help="the page to write"
    )
    parser.add_argument("--force", action="store_true", help="replace OUT.html if it exists")
    parser.set_defaults(run=run)


def proven_records(path: Path) -> tuple[list[Record], VerifyReport, str]:
    """The records a page of a journal file may show (the proven prefix), the chain's report and the
    journal's id, from one pass over the file."""
    journal, report = open_proven_file(path, prefix=True)
    with journal:
        records = list(journal.read(limit=report.head.seq))
    header = records[0].body if records else None
    return records, report, getattr(header, "journal", path.stem)


def file_subagent_page(path: Path, journal_id: str, prices: PriceTable | None) -> dict[str, Any] | None:
    """The page data of a sub-agent journal beside `path`, or None when it is missing (the command says
    so once for all of them) or is not a journal (said on stderr)."""
    found = subagent_file(path, journal_id)
    if found is None:
        return None
    try:
        records, report, linked_id = proven_records(found)
    except (JournalError, UsageError) as exc:
        warn(f"sub-agent journal {found}: {exc}; its link says it is missing")
        return None
    return page_data(records, report, journal_id=linked_id, prices=prices)


def store_subagent_page(
    store: JournalStore, journal_id: str, prices: PriceTable | None
) -> dict[str, Any] | None:
    try:
        return journal_page_data(store, journal_id, prices=prices)
    except (JournalError, StoreError):
        return None  # the command says so once for all of them


def run(args: argparse.Namespace) -> int:
    out: Path = args.output
    if out.exists() and not args.force:
        msg = f"{out}: exists; pass --force to replace it"
        raise UsageError(msg)
    prices = installed_prices()
    if args.store is not None:  # a store's page also shows its blobs and the memory files turns used
        with connect_store(args.store) as store, store_errors():
            data = journal_page_data(store, str(args.path), prices=prices)
            data = with_subagents(data, lambda j: store_subagent_page(store, j, prices))
        records_shown, ok, status = data["records"], data["status"]["ok"], data["status"]
    else:
        records, report, journal_id = proven_records(args.path)
        data = page_data(records, report, journal_id=journal_id, prices=prices)
        data = with_subagents(data, lambda j: file_subagent_page(args.path, j, prices))
        records_shown, ok, status = len(records), report.ok, data["status"]
    page = render_page(data)
    replace_private(out, page.encode("utf-8"))  # the page holds the session's text: 0600
    held = len(data["subagents"])
    subagents = f" and {held} sub-agent session{'s' if held != 1 else ''}" if held else ""
    print(f"wrote {out} ({records_shown} records{subagents})", file=sys.stderr)
    if missing := data["subagents_missing"]:
        where = "in the store" if args.store is not None else f"beside {args.path} (<journal id>.jsonl)"
        names = ", ".join(repr(name) for name in missing[:5]) + (", ..." if len(missing) > 5 else "")
        warn(f"{len(missing)} linked sub-agent journal(s) not found {where}: {names}; their links say so")
    if not ok:
        warn(f"{status['text']}; the page shows the {status['proven']} proven records before the damage")
        return PROBLEM
    return OK
