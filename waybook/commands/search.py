"""`waybook search QUERY --store URL`: search a store's transcripts and memory.

Ranked full-text search (SQLite FTS5, BM25) over every journal of a store. The index is kept beside the store
(DIR.search.sqlite for file:DIR, FILE.search.sqlite for sqlite:FILE, or --index) and brought up to date from
the store's feed before each search. Every word of QUERY must match. Each hit shows its whole journal id, seq
and role, then the snippet cut to the terminal's width. Exit 1 when nothing matched.

Example: waybook search 'oat milk' --store file:./sessions --role user --json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json, stdout
from waybook.commands.exits import OK, PROBLEM, UsageError
from waybook.commands.layout import cut, width
from waybook.commands.progress import Phases
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import visible


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "search", __doc__)
    parser.add_argument("query", metavar="QUERY")
    add_store_option(parser, ids=None, required=True)
    parser.add_argument("--index", type=Path, help="the index file (required for other stores)")
    parser.add_argument("--journal", help="only this journal")
    parser.add_argument("--role", help="only records by user, assistant, system, tool, summary, memory")
    parser.add_argument("--kind", help="only records of this kind (e.g. waybook.user/2)")
    parser.add_argument("--journal-role", help="only journals of this role (session, working_memory, ...)")
    parser.add_argument("--since", metavar="TIME", help="only records at or after this UTC time (ISO 8601)")
    parser.add_argument("--until", metavar="TIME", help="only records before this UTC time (ISO 8601)")
    parser.add_argument("--hidden", action="store_true", help="include journals the store hid")
    parser.add_argument(
        "--history",
        action="store_true",
        help="memory: match every text a note ever had (deleted notes too), not only current notes",
    )
    parser.add_argument("--limit", type=int, default=20, help="results (default 20)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the index from the whole feed")
    add_json_option(parser, "a JSON list of results")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from waybook.search import SearchError, SearchIndex, default_index_path

    path = args.index or default_index_path(args.store)
    if path is None:
        msg = f"{args.store}: give --index FILE for the search index of this store"
        raise UsageError(msg)
    with connect_store(args.store) as store:
        try:
            with SearchIndex(path, args.store) as index:
                with Phases(1, threshold=0) as phases:  # the feed's length is not known ahead
                    phases.start("indexing the feed")
                    build = index.rebuild if args.rebuild else index.update
                    build(store, progress=phases.advance)
                hits = index.search(
                    args.query,
                    journal=args.journal,
                    role=args.role,
                    kind=args.kind,
                    journal_role=args.journal_role,
                    since=args.since,
                    until=args.until,
                    hidden=args.hidden,
                    history=args.history,
                    limit=args.limit,
                )
        except SearchError as exc:
            raise UsageError(str(exc)) from exc
    if args.json:
        emit_json([hit.as_json() for hit in hits])
        return OK if hits else PROBLEM
    if not hits:
        stdout().print("no matches")
        return PROBLEM
    _print_hits(hits)
    return OK


def _print_hits(hits: list[Any]) -> None:
    """Two lines a hit: score, the whole journal id (never cut: a session and its `.agent-...`
    sub-agent must not look alike), seq and role; then the snippet on one line cut to the width."""
    room = width()
    terminal = sys.stdout.isatty()
    bold, plain = ("\x1b[1m", "\x1b[0m") if terminal else ("", "")
    out = []
    for hit in hits:
        journal = visible(hit.journal, one_line=True)
        out.append(f"{hit.score:6.3f}  {bold}{journal}{plain}  seq {hit.seq}  {hit.role}\n")
        out.append(f"        {visible(cut(hit.snippet, room - 8), one_line=True)}\n")
    sys.stdout.write("".join(out))
