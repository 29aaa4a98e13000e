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
import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, UsageError, check_recorded, quoted
from waybook.commands.journal_files import open_journal_file
from waybook.commands.store_option import connect_store, journal_id_errors, open_in_store, store_errors
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import say
from waybook.journal import JsonlJournal, SessionJournal, erase
from waybook.model import (
    CONTENT_PARTS,
    ErasureInterruptedError,
    Header,
    JournalError,
    NotAJournalError,
)

_SEQS = re.compile(r"([1-9][0-9]*)(?:\.\.([1-9][0-9]*))?")
_MAX_DIGITS = 20
"""Digits a seq is read with: more than any journal's seq has (a seq is a 64-bit count)."""


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


@attrs.frozen
class SeqRange:
    """One `--seq` value as given (`value`, for messages) and the inclusive range of seqs it names."""

    value: str
    first: int
    last: int


def parse_seqs(values: list[str]) -> list[SeqRange]:
    """`--seq` values as ranges, not yet expanded (a range is checked against the journal's head before
    its seqs are made); a usage error names the bad one."""
    ranges: list[SeqRange] = []
    for value in values:
        found = _SEQS.fullmatch(value.strip())
        if found is None:
            msg = f"--seq {quoted(value)}: give a record's seq (4) or an inclusive range (4..9)"
            raise UsageError(msg)
        first, last = (_seq(text) for text in (found.group(1), found.group(2) or found.group(1)))
        if last < first:
            msg = f"--seq {quoted(value)}: a range runs from the smaller seq to the larger ({last}..{first})"
            raise UsageError(msg)
        ranges.append(SeqRange(value, first, last))
    return ranges


def _seq(digits: str) -> int:
    """A seq's digits as an int; more digits than any journal's seq has stand for "past every head" (int()
    refuses more than 4300 digits)."""
    return int(digits) if len(digits) <= _MAX_DIGITS else 10**_MAX_DIGITS


def seqs_in(journal: SessionJournal, ranges: list[SeqRange]) -> Iterator[int]:
    """The seqs `ranges` name, each checked first against `journal`: a seq past its head or its header is a
    usage error naming the `--seq` value; the seqs are then made lazily (the erasure bounds how many)."""
    head = journal.head().seq
    for given in ranges:
        if given.last > head:
            past = given.last if given.last < 10**_MAX_DIGITS else "past it"
            msg = (
                f"--seq {quoted(given.value)}: the journal ends at seq {head} (asked for {past}); nothing "
                "was erased. `waybook log` lists its records"
            )
            raise UsageError(msg)
    if any(given.first == 1 for given in ranges):
        (first,) = journal.read(0, 1)
        if type(first.body) is Header:
            value = next(given.value for given in ranges if given.first == 1)
            msg = (
                f"--seq {quoted(value)}: record 1 is the journal's header, which holds no content to erase; "
                "give seqs from 2"
            )
            raise UsageError(msg)
    return itertools.chain.from_iterable(range(given.first, given.last + 1) for given in ranges)


@contextlib.contextmanager
def writable(args: argparse.Namespace) -> Iterator[tuple[SessionJournal, bool]]:
    """The journal to erase, open for writing (a JSONL writer's open finishes an interrupted erasure), and
    whether it had one (its marker: a read-only open refuses it) that this open finished."""
    if args.store is not None:
        journal_id = str(args.path)
        interrupted = args.resume and _refused_as_interrupted(lambda: open_in_store(args.store, journal_id))
        with (
            connect_store(args.store) as store,
            store_errors(),
            journal_id_errors(args.store, doing="erase"),
        ):
            journal = store.open(journal_id)
            try:
                yield journal, interrupted
            finally:
                journal.close()
        return
    path: Path = args.path
    # a file that is not a journal is refused before a writer opens it
    interrupted = path.is_file() and _refused_as_interrupted(lambda: open_journal_file(path))
    if not path.is_file():
        msg = f"{path}: no such journal file (give a JSONL journal, or --store URL ID)"
        raise UsageError(msg)
    with JsonlJournal(path, create=False) as journal:
        yield journal, interrupted


def _refused_as_interrupted(open_to_read: Callable[[], SessionJournal]) -> bool:
    """Whether a read-only open refuses the journal for an interrupted erasure. A file that is not a journal
    raises NotAJournalError; any other refusal (damage, a bad id) is left to the writer's open to say."""
    try:
        open_to_read().close()
    except ErasureInterruptedError:
        return True
    except NotAJournalError:
        raise
    except (JournalError, UsageError):
        return False
    return False


def run(args: argparse.Namespace) -> int:
    check_recorded("--actor", args.actor, what="who asks")
    check_recorded("--policy", args.policy, what="the retention policy this applies")
    if args.resume:
        if args.seq or args.reason is not None or args.part or args.actor or args.policy:
            msg = (
                "--resume finishes an interrupted erasure, as its erasure record says; it takes no --seq, "
                "--part, --reason, --actor or --policy"
            )
            raise UsageError(msg)
        with writable(args) as (journal, interrupted):
            finish = getattr(journal, "finish_erasures", None)
            done: tuple[int, ...] = finish() if callable(finish) else ()
        if args.json:
            emit_json({"journal": str(args.path), "finished": list(done), "interrupted": interrupted})
        elif done:
            say(f"{args.path}: finished erasing records {', '.join(map(str, done))}")
        elif interrupted:
            say(f"{args.path}: finished an interrupted erasure; `waybook verify` proves the journal")
        else:
            say(f"{args.path}: no erasure was left unfinished")
        return OK
    if not args.seq:
        msg = "erase needs --seq N or --seq N..M: the records whose content to erase"
        raise UsageError(msg)
    if args.reason is None or not args.reason.strip():
        msg = "erase needs --reason TEXT: why the content goes (it is recorded in the journal)"
        raise UsageError(msg)
    ranges = parse_seqs(args.seq)
    with writable(args) as (journal, _):
        seqs = seqs_in(journal, ranges)
        # a pending erasure (its erasure record committed, its records' content still there) is finished
        # first: a new erasure taking one of its records would leave it naming a record it did not erase
        finish = getattr(journal, "finish_erasures", None)
        finished: tuple[int, ...] = finish() if callable(finish) else ()
        receipt = erase(
            journal,
            seqs,
            reason=args.reason,
            actor=args.actor,
            policy=args.policy,
            parts=args.part,
        )
    if args.json:
        emit_json({**receipt.as_json(), "finished_pending": list(finished)})
        return OK
    if finished:
        say(f"{args.path}: finished the pending erasure of records {seq_runs(list(finished))} first")
    if not receipt.erased:
        say(f"{args.path}: nothing erased")
    else:
        erasures = seq_runs([h.seq for h in receipt.erasures])
        erased = seq_runs([e.seq for e in receipt.erased])
        say(
            f"{args.path}: erased records {erased} (erasure record {erasures}; receipt {receipt.sha256[:16]})"
        )
    skipped: dict[str, list[int]] = {}
    for skip in receipt.skipped:  # one line a reason, in the order each first met
        skipped.setdefault(skip.why, []).append(skip.seq)
    for why, skipped_seqs in skipped.items():
        say(f"  skipped {seq_runs(skipped_seqs)}: {why}")
    return OK


def seq_runs(seqs: list[int]) -> str:
    """Increasing seqs as text, a run of three or more as `first..last`: `2, 4, 6..41`."""
    parts: list[str] = []
    start = 0
    for end in range(1, len(seqs) + 1):
        if end == len(seqs) or seqs[end] != seqs[end - 1] + 1:
            run = seqs[start:end]
            parts.append(f"{run[0]}..{run[-1]}" if len(run) >= 3 else ", ".join(map(str, run)))
            start = end
    return ", ".join(parts)
