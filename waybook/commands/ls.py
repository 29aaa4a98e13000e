"""`waybook ls --store URL`: list the journals of a store.

List a store's journals in creation order: id, records, last activity and title (the first user message),
fitted to the terminal; --long lists role, creation time and metadata instead, each value cut to fit (the
whole values: --json). Filter by role and by metadata (every --meta must match); hidden journals are listed
with --hidden. Purged journals are never listed. Prints the cursor for the next page when there is one.

Example: waybook ls --store file:./sessions --role session --meta user=ada --limit 20
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, warn
from waybook.commands.layout import cut, width
from waybook.commands.store_option import add_store_option, connect_store, metadata_pair, store_errors
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import fit, visible
from waybook.commands.titles import Glance, glance
from waybook.model import JournalError
from waybook.stores import open_journals

if TYPE_CHECKING:
    from waybook.stores import JournalPage, JournalStore


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "ls", __doc__)
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
        "--long",
        action="store_true",
        help="id, role, creation time and metadata of each journal, values cut to the width (--json: whole)",
    )
    add_json_option(parser, "one JSON object: journals (every field) and cursor")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """List one page; a journal that cannot be read (lost records, corruption) is listed as damaged,
    named on stderr, and makes the exit status 1, while the others list as usual."""
    metadata = dict(metadata_pair(item) for item in args.meta)
    damage: dict[str, str] = {}
    with connect_store(args.store) as store:
        with store_errors():
            page = store.list(
                role=args.role, metadata=metadata, hidden=args.hidden, after=args.after, limit=args.limit
            )
        looked = args.json or not args.long
        glances = _glances(store, [info.journal_id for info in page], damage) if looked else {}
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


def _glances(store: JournalStore, journal_ids: list[str], damage: dict[str, str]) -> dict[str, Glance]:
    """Each journal's glance (the page's journals read together where the store can: `open_journals`),
    or, for one that cannot be read, a row saying so (its damage goes to `damage`)."""
    glances = {}
    for journal_id, opened in open_journals(store, journal_ids):
        try:
            if isinstance(opened, JournalError):
                raise opened
            with opened:
                glances[journal_id] = glance(opened)
        except JournalError as exc:
            damage[journal_id] = str(exc)
            glances[journal_id] = Glance(
                records=0, last_activity=None, title="(damaged: see `waybook verify --store`)"
            )
    return glances


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


VALUE_WIDTH = 32
"""The most columns one metadata value takes in `ls --long` (the whole value: --json)."""


def _print_long(page: JournalPage) -> None:
    """id, role, creation time and metadata, one line per journal, fitted to the width (layout.width).

    Nested metadata shows as `key.inner=value`, each value cut to VALUE_WIDTH columns and the line to
    the width, so a header that holds a whole system prompt (Codex's) stays one line; `--json` gives
    every value whole."""
    rows = []
    for info in page:
        name = visible(info.journal_id, one_line=True) + (" (hidden)" if info.hidden else "")
        meta = "  ".join(
            f"{visible(key, one_line=True)}={cut(visible(_value(value), one_line=True), VALUE_WIDTH)}"
            for key, value in _flat(info.metadata)
        )
        rows.append((name, visible(info.role, one_line=True), info.created_at[:16].replace("T", " "), meta))
    terminal = sys.stdout.isatty()
    id_width = max([len(row[0]) for row in rows] + [2])
    role_width = max([len(row[1]) for row in rows] + [4])
    bold, plain = ("\x1b[1m", "\x1b[0m") if terminal else ("", "")
    lead = id_width + 2 + role_width + 2 + 16 + 2
    lines = [f"{bold}{'ID':<{id_width}}  {'ROLE':<{role_width}}  {'CREATED':<16}  METADATA{plain}"]
    for name, role, created, meta in rows:
        line = f"{name:<{id_width}}  {role:<{role_width}}  {created:<16}  "
        lines.append(line + fit(meta, max(width() - lead, MIN_TITLE)))
    sys.stdout.write("".join(line.rstrip() + "\n" for line in lines))


def _flat(metadata: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Metadata as `key.inner=value` pairs, in key order: a nested object's values each cut on its own."""
    for key, value in sorted(metadata.items()):
        if isinstance(value, dict) and value:
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _value(value: Any) -> str:
    """A metadata value as `ls --long` shows it: text as it is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
