"""`waybook ls --store URL`: the journals of a store, in creation order, a page at a time."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from waybook.commands.common import emit_json, stdout
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.layout import cut, width
from waybook.commands.store_option import add_store_option, connect_store, store_errors
from waybook.commands.terminal import visible
from waybook.commands.titles import Glance, glance
from waybook.journal import JournalError
from waybook.stores import open_journal

if TYPE_CHECKING:
    from waybook.stores import JournalPage, JournalStore


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "ls",
        help="list the journals of a store",
        description=(
            "List a store's journals in creation order: id, records, last activity and title (the first "
            "user message), fitted to the terminal; --long lists role, creation time and metadata instead. "
            "Filter by role and by metadata (every --meta must match); hidden journals are listed with "
            "--hidden. "
            "Purged journals are never listed. Prints the cursor for the next page when there is one."
        ),
        epilog="Example: waybook ls --store file:./sessions --role session --meta user=ada --limit 20",
    )
    add_store_option(parser, ids=None, required=True)
    parser.add_argument("--role", help="only journals of this role (session, working_memory, ...)")
    parser.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="metadata to match (VALUE as JSON or text)",
    )
    parser.add_argument("--hidden", action="store_true", help="include hidden journals")
    parser.add_argument("--limit", type=int, default=100, help="journals per page (default 100)")
    parser.add_argument("--after", metavar="CURSOR", help="the cursor a previous page printed")
    parser.add_argument(
        "--long", action="store_true", help="id, role, creation time and full metadata of each journal"
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object: journals (every field) and cursor"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List one page; a journal that cannot be read (lost records, corruption) is listed as damaged,
    named on stderr, and makes the exit status 1, while the others list as usual."""
    metadata = dict(_pair(item) for item in args.meta)
    damage: dict[str, str] = {}
    with connect_store(args.store) as store:
        with store_errors():
            page = store.list(
                role=args.role, metadata=metadata, hidden=args.hidden, after=args.after, limit=args.limit
            )
        looked = args.json or not args.long
        glances = (
            {info.journal_id: _glance(store, info.journal_id, damage) for info in page} if looked else {}
        )
    for journal_id, problem in damage.items():
        warn(f"journal {journal_id!r} is damaged: {problem}")
    status = PROBLEM if damage else OK
    if args.json:
        journals = [
            {
                "id": info.journal_id,
                "role": info.role,
                "metadata": info.metadata,
                "created": info.created,
                "created_at": info.created_at,
                "hidden": info.hidden,
                "records": glances[info.journal_id].records,
                "last_activity": glances[info.journal_id].last_activity,
                "title": glances[info.journal_id].title,
                "damage": damage.get(info.journal_id),
            }
            for info in page
        ]
        emit_json({"journals": journals, "cursor": page.cursor})
        return status
    if args.long:
        _print_long(page)
    else:
        _print_short(page, glances)
    if page.cursor is not None:
        sys.stderr.write(f"waybook: more journals; next page: --after {page.cursor}\n")
    return status


MIN_TITLE = 20
"""The fewest characters of a title a list shows."""


def _glance(store: JournalStore, journal_id: str, damage: dict[str, str]) -> Glance:
    """The journal's glance, or, if it cannot be read, a row saying so (its damage goes to `damage`)."""
    try:
        with open_journal(store, journal_id) as journal:
            return glance(journal)
    except JournalError as exc:
        damage[journal_id] = str(exc)
        return Glance(records=0, last_activity=None, title="(damaged: see `waybook verify --store`)")


def _print_short(page: JournalPage, glances: dict[str, Glance]) -> None:
    """id, records, last activity, title, one line per journal, fitted to the width (layout.width).

    Ids are never cut: when the longest id leaves no room for a title on a terminal, each id gets a line
    of its own and the rest follows, indented, on the next. Into a pipe, a journal is always one line.
    """
    rows = []
    for info in page:
        seen = glances[info.journal_id]
        name = visible(info.journal_id, one_line=True) + (" (hidden)" if info.hidden else "")
        when = (seen.last_activity or "")[:16].replace("T", " ")
        title = seen.title or f"({info.role}, untitled)"
        rows.append((name, str(seen.records), when, title))
    terminal = sys.stdout.isatty()
    room = width()
    id_width = max([len(row[0]) for row in rows] + [2])
    fixed = id_width + 2 + 7 + 2 + 16 + 2
    stacked = terminal and fixed + MIN_TITLE > room
    lead = 4 + 7 + 2 + 16 + 2 if stacked else fixed
    title_width = max(room - lead, MIN_TITLE)
    bold, plain = ("\x1b[1m", "\x1b[0m") if terminal else ("", "")
    head = f"{'RECORDS':>7}  {'LAST ACTIVITY':<16}  TITLE"
    lines = [f"{bold}ID\n    {head}{plain}" if stacked else f"{bold}{'ID':<{id_width}}  {head}{plain}"]
    for name, records, when, title in rows:
        rest = f"{records:>7}  {when:<16}  {cut(title, title_width)}"
        lines.append(f"{name}\n    {rest}" if stacked else f"{name:<{id_width}}  {rest}")
    sys.stdout.write("".join(line.rstrip() + "\n" for line in lines))


def _print_long(page: JournalPage) -> None:
    table = Table(box=None, show_edge=False, pad_edge=False)
    for column in ("ID", "ROLE", "CREATED", "METADATA"):
        table.add_column(column)
    for info in page:
        name = escape(info.journal_id) + (" (hidden)" if info.hidden else "")
        meta = escape(json.dumps(info.metadata, sort_keys=True, ensure_ascii=False)) if info.metadata else ""
        table.add_row(name, info.role, info.created_at, meta)
    stdout().print(table)


def _pair(item: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        msg = f"--meta {item!r}: write KEY=VALUE"
        raise UsageError(msg)
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value
