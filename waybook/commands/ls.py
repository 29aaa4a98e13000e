"""`waybook ls --store URL`: the journals of a store, in creation order, a page at a time."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.markup import escape
from rich.table import Table

from waybook.commands.common import emit_json, stdout
from waybook.commands.exits import OK, UsageError
from waybook.commands.store_option import add_store_option, connect_store


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "ls",
        help="list the journals of a store",
        description=(
            "List a store's journals in creation order: id, role, when created, and metadata. Filter by "
            "role and by metadata (every --meta must match); hidden journals are listed with --hidden. "
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
    parser.add_argument("--json", action="store_true", help="one JSON object: journals and cursor")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    metadata = dict(_pair(item) for item in args.meta)
    with connect_store(args.store) as store:
        from waybook.stores import StoreArgumentError

        try:
            page = store.list(
                role=args.role, metadata=metadata, hidden=args.hidden, after=args.after, limit=args.limit
            )
        except StoreArgumentError as exc:
            raise UsageError(str(exc)) from exc
    if args.json:
        journals = [
            {
                "id": info.journal_id,
                "role": info.role,
                "metadata": info.metadata,
                "created": info.created,
                "created_at": info.created_at,
                "hidden": info.hidden,
            }
            for info in page
        ]
        emit_json({"journals": journals, "cursor": page.cursor})
        return OK
    table = Table(box=None, show_edge=False, pad_edge=False)
    for column in ("ID", "ROLE", "CREATED", "METADATA"):
        table.add_column(column)
    for info in page:
        name = escape(info.journal_id) + (" (hidden)" if info.hidden else "")
        meta = escape(json.dumps(info.metadata, sort_keys=True, ensure_ascii=False)) if info.metadata else ""
        table.add_row(name, info.role, info.created_at, meta)
    stdout().print(table)
    if page.cursor is not None:
        sys.stderr.write(f"waybook: more journals; next page: --after {page.cursor}\n")
    return OK


def _pair(item: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        msg = f"--meta {item!r}: write KEY=VALUE"
        raise UsageError(msg)
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value
