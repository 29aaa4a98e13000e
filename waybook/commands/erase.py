r"""`waybook erase PATH|--store URL ID --seq N[..M] [--part P] --reason TEXT [--json]`, and `--resume`: erase
records' content, keeping every digest (docs/erasure.md).

Erase the content of records (text, thinking, tool calls and outputs, images, data): an erasure record (which
records, why, who) is appended first, then the content's bytes are removed. Every digest, the tree and usage
stay; `waybook verify` proves the rest and that every absent content was erased by a record. Only journals
written sealed (schema 2) can erase: `waybook migrate` writes a sealed copy of an older one.

Example: waybook erase session.jsonl --seq 4..9 --reason 'the user asked'
         waybook erase --store sqlite:store.db chat-1 --seq 12 --part tool_output \
             --reason 'a key in the output'
         waybook erase --resume session.jsonl

`--resume` finishes an erasure a crash interrupted (the JSONL marker, a pending erasure record, SQLite's
log).
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, UsageError
from waybook.commands.journal_files import open_journal_file
from waybook.commands.store_option import connect_store, store_errors
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.journal import JsonlJournal, SessionJournal, erase
from waybook.model import CONTENT_PARTS

_SEQS = re.compile(r"([1-9][0-9]*)(?:\.\.([1-9][0-9]*))?")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "erase", __doc__)
    parser.add_argument(
        "--seq",
        action="append",
        default=[],
        metavar="N[..M]",
        help="a record's seq, or an inclusive range (repeat for more)",
    )
    parser.add_argument(
        "--part",
        action="append",
        choices=CONTENT_PARTS,
        help="erase only records whose content holds this part (repeat for more; a record is erased whole)",
    )
    parser.add_argument("--reason", help="why the content goes (recorded in the erasure record)")
    parser.add_argument("--actor", help="who asks (recorded)")
    parser.add_argument("--policy", help="the retention policy this applies, if any (recorded)")
    parser.add_argument("--resume", action="store_true", help="finish an erasure a crash interrupted")
    add_json_option(parser, "print the erasure receipt as JSON")
    parser.set_defaults(run=run)


def parse_seqs(values: list[str]) -> list[int]:
    """`--seq` values as seqs; a usage error names the bad one."""
    seqs: list[int] = []
    for value in values:
        found = _SEQS.fullmatch(value.strip())
        if found is None:
            msg = f"--seq {value!r}: give a record's seq (4) or an inclusive range (4..9)"
            raise UsageError(msg)
        first = int(found.group(1))
        last = int(found.group(2) or first)
        if last < first:
            msg = f"--seq {value!r}: a range runs from the smaller seq to the larger (e.g. {last}..{first})"
            raise UsageError(msg)
        seqs.extend(range(first, last + 1))
    return seqs


@contextlib.contextmanager
def writable(args: argparse.Namespace) -> Iterator[SessionJournal]:
    """The journal to erase, open for writing (a JSONL writer's open finishes an interrupted erasure)."""
    if args.store is not None:
        with connect_store(args.store) as store, store_errors():
            journal = store.open(str(args.path))
            try:
                yield journal
            finally:
                journal.close()
        return
    path: Path = args.path
    if path.exists():  # a missing path, a directory or a non-journal is refused before a writer opens it
        with contextlib.suppress(Exception):
            open_journal_file(path).close()
    if not path.is_file():
        msg = f"{path}: no such journal file (give a JSONL journal, or --store URL ID)"
        raise UsageError(msg)
    with JsonlJournal(path, create=False) as journal:
        yield journal


def run(args: argparse.Namespace) -> int:
    if args.resume:
        if args.seq or args.reason is not None or args.part:
            msg = "--resume finishes an interrupted erasure; it takes no --seq, --part or --reason"
            raise UsageError(msg)
        with writable(args) as journal:
            finish = getattr(journal, "finish_erasures", None)
            done: tuple[int, ...] = finish() if callable(finish) else ()
        if args.json:
            emit_json({"journal": str(args.path), "finished": list(done)})
        elif done:
            print(f"{args.path}: finished erasing records {', '.join(map(str, done))}")
        else:
            print(f"{args.path}: no erasure was left unfinished")
        return OK
    if not args.seq:
        msg = "erase needs --seq N or --seq N..M: the records whose content to erase"
        raise UsageError(msg)
    if args.reason is None or not args.reason.strip():
        msg = "erase needs --reason TEXT: why the content goes (it is recorded in the journal)"
        raise UsageError(msg)
    seqs = parse_seqs(args.seq)
    with writable(args) as journal:
        receipt = erase(
            journal, seqs, reason=args.reason, actor=args.actor, policy=args.policy, parts=args.part
        )
    if args.json:
        emit_json(receipt.as_json())
        return OK
    if not receipt.erased:
        print(f"{args.path}: nothing erased")
    else:
        erasures = ", ".join(str(h.seq) for h in receipt.erasures)
        erased = ", ".join(str(e.seq) for e in receipt.erased)
        print(
            f"{args.path}: erased records {erased} (erasure record {erasures}; receipt {receipt.sha256[:16]})"
        )
    for skipped in receipt.skipped:
        print(f"  skipped {skipped.seq}: {skipped.why}")
    return OK
