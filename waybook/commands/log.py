"""`waybook log PATH [--after SEQ] [--limit N] [--kind K]`: list records in commit order.

List records one per line: seq, time, kind, id (the shortest prefix unique in the journal) and a summary,
fitted to the terminal (120 columns into a pipe; --json: JSON lines).

Example: waybook log session.jsonl --after 100 --limit 20 --kind assistant
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from waybook.codecs import CURRENT_TAGS, LEGACY_TAGS, canonical_json
from waybook.commands.common import open_journal, seq_arg, short_kind, summary
from waybook.commands.ids import short_ids
from waybook.commands.journal_files import damage_status
from waybook.commands.layout import width
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import visible
from waybook.journal import iter_shown

MIN_SUMMARY = 20
"""The fewest characters of a summary a line shows, however narrow the terminal."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "log", __doc__)
    parser.add_argument("--after", type=seq_arg, default=0, metavar="SEQ", help="start after this seq")
    parser.add_argument("--limit", type=seq_arg, metavar="N", help="at most N records")
    parser.add_argument(
        "--kind",
        type=known_kind,
        metavar="K",
        help="only this kind: a tag (waybook.user/2) or short name (user)",
    )
    add_json_option(parser, "JSON lines: seq, id, kind, at, prev, digest, body")
    parser.set_defaults(run=run)


def known_kind(value: str) -> str:
    """`--kind`: a wire tag or a short name of one; anything else is a usage error listing the names."""
    tags = [*CURRENT_TAGS, *LEGACY_TAGS]
    if value in tags or value in {short_kind(t) for t in tags}:
        return value
    names = ", ".join(sorted({short_kind(t) for t in CURRENT_TAGS}))
    msg = f"unknown kind {value!r}; use a tag (waybook.user/2) or one of: {names}"
    raise argparse.ArgumentTypeError(msg)


def run(args: argparse.Namespace) -> int:
    shown = 0
    terminal = sys.stdout.isatty()  # escape everything non-ASCII there, as emit_json does
    with open_journal(args.path, args.store) as journal:
        names: dict[str, str] = {}
        if not args.json:  # ids cut to the shortest prefix that is still unique in the whole journal
            names = short_ids([r.id for r in journal.read()])
        id_width = max((len(name) for name in names.values()), default=8)
        room = width()
        records = journal.read(after=args.after)
        if not args.json:  # an erased record's summary is its placeholder; the JSON is the record as stored
            records = iter_shown(journal, records)
        for record in records:
            if args.kind and args.kind not in (record.kind, short_kind(record.kind)):
                continue
            if args.limit is not None and shown >= args.limit:
                break
            shown += 1
            if args.json:
                line = {
                    "seq": record.seq,
                    "id": record.id,
                    "kind": record.kind,
                    "at": record.at,
                    "prev": record.prev,
                    "digest": record.digest,
                    "body": json.loads(canonical_json(record.body)),
                }
                if record.erased is not None:
                    line["erased"] = record.erased.by
                sys.stdout.write(json.dumps(line, sort_keys=True, ensure_ascii=terminal) + "\n")
            else:
                kind = short_kind(record.kind)
                name = visible(names.get(record.id, record.id), one_line=True)
                lead = f"{record.seq:>6} {record.at[:16]} {kind:<11} {name:<{id_width}} "
                sys.stdout.write(lead + summary(record, max(room - len(lead), MIN_SUMMARY)) + "\n")
    return damage_status(journal)
