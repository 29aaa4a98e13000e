"""`waybook view PATH -o OUT.html`: one self-contained HTML page of a session (no network, `file://`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from waybook._files import replace_private
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.journal_files import open_proven_file
from waybook.commands.store_option import add_store_option, connect_store, store_errors
from waybook.journal import Record, VerifyReport
from waybook.view import journal_page_data, page_data, render_page


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "view",
        help="write a session as one self-contained HTML page",
        description=(
            "Write one HTML file that shows the session: its branches (abandoned ones greyed, never hidden), "
            "every leaf move and its reason, tool calls paired with their results, sub-agent links, memory "
            "used per turn, usage and the chain's proof. The page loads nothing from the network and runs "
            "nothing from the session. A damaged journal shows its proven prefix and where the damage starts."
        ),
        epilog="Example: waybook view session.jsonl -o session.html",
    )
    parser.add_argument("path", type=Path, metavar="PATH")
    add_store_option(parser)
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


def run(args: argparse.Namespace) -> int:
    out: Path = args.output
    if out.exists() and not args.force:
        msg = f"{out}: exists; pass --force to replace it"
        raise UsageError(msg)
    if args.store is not None:  # a store's page also shows its blobs and the memory files turns used
        with connect_store(args.store) as store, store_errors():
            data = journal_page_data(store, str(args.path))
        records_shown, ok, status = data["records"], data["status"]["ok"], data["status"]
    else:
        records, report, journal_id = proven_records(args.path)
        data = page_data(records, report, journal_id=journal_id)
        records_shown, ok, status = len(records), report.ok, data["status"]
    page = render_page(data)
    replace_private(out, page.encode("utf-8"))  # the page holds the session's text: 0600
    print(f"wrote {out} ({records_shown} records)", file=sys.stderr)
    if not ok:
        warn(f"{status['text']}; the page shows the {status['proven']} proven records before the damage")
        return PROBLEM
    return OK
