"""`waybook migrate OLD.jsonl -o NEW.jsonl` | `--store URL ID --to NEW_ID`: write a sealed (erasable) copy
of an older journal.

Prove a journal and write a new one in the sealed shape, whose content can be erased (`waybook erase`),
holding the same records after a header that names the old journal's head digest (metadata.migrated_from). The
old journal is left as it was.

Example: waybook migrate old.jsonl -o sealed.jsonl
         waybook migrate --store sqlite:store.db chat-1 --to chat-1-sealed

A journal written before erasable content (schema 1) cannot erase: its digests cover its content. The
sealed copy (docs/erasure.md) keeps the records' ids, times, bodies and batches.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, UsageError
from waybook.commands.journal_files import open_journal_file
from waybook.commands.store_option import connect_store, journal_id_errors, store_errors
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import say
from waybook.journal import DamageReporting, JsonlJournal, SessionJournal, verify
from waybook.model import GENESIS, SEALED_SCHEMA, Erasure, Header, IntegrityError, NewRecord, Record

MIGRATED_KEY = "migrated_from"
"""The header metadata key naming the journal a migrated one was copied from, and its head."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "migrate", __doc__)
    parser.add_argument("-o", "--output", type=Path, metavar="NEW", help="the new journal file")
    parser.add_argument("--to", metavar="NEW_ID", help="with --store: the new journal's id in the store")
    add_json_option(parser, "print what was written as JSON")
    parser.set_defaults(run=run)


def migrated(records: Iterable[Record], *, journal_id: str | None = None) -> Iterator[list[NewRecord]]:
    """The batches of the sealed copy of `records` (a proved journal, header first): its header with
    `migrated_from` naming the old head, then each batch of the old journal as one batch."""
    items = iter(records)
    first = next(items, None)
    if first is None or type(first.body) is not Header:
        msg = "the journal has no header; there is nothing to migrate"
        raise IntegrityError(msg)
    old: Header = first.body
    rest = list(items)
    last = rest[-1] if rest else first
    provenance = {"journal": old.journal, "seq": last.seq, "digest": last.digest, "schema": old.schema}
    header = Header(
        journal=journal_id or old.journal,
        creator=old.creator,
        metadata={**old.metadata, MIGRATED_KEY: provenance},
        role=old.role,
        schema=SEALED_SCHEMA,
    )
    yield [NewRecord(id=first.id, at=first.at, body=header)]
    batch: list[NewRecord] = []
    for record in rest:
        batch.append(NewRecord(id=record.id, at=record.at, body=record.body))
        if record.batch is None or record.batch[0] == record.batch[1]:
            yield batch
            batch = []
    if batch:
        yield batch


def check_migratable(source: SessionJournal) -> None:
    """Refuse, before anything is created, a journal whose sealed copy would not be faithful: one that does
    not verify (IntegrityError), or one holding erasures (a UsageError: an erasure names the erased
    records' commitments, which a copy's new seals cannot carry)."""
    report = verify(source)
    if not report.ok:
        msg = f"{source.name}: does not verify ({report}); nothing was migrated. Run `waybook verify`"
        raise IntegrityError(msg)
    damage = source.damage if isinstance(source, DamageReporting) else None
    if damage is not None:  # the records before it verify, but `waybook verify` reports it: exit 1
        what = "a torn tail" if damage.torn else "damage"
        msg = (
            f"{source.name}: {what} at byte {damage.offset} (would be seq {damage.seq}): {damage.reason}; "
            "nothing was migrated. `waybook repair PATH` moves the torn bytes to a quarantine file, then "
            "migrate copies the journal"
        )
        raise IntegrityError(msg)
    (first,) = source.read(0, 1)
    if type(first.body) is not Header or first.body.schema < SEALED_SCHEMA:
        return  # written before sealing: it holds no erasure
    for record in source.read():
        if record.erased is not None or type(record.body) is Erasure:
            msg = (
                f"{source.name}: record {record.seq} is an erasure or erased; a sealed copy cannot carry "
                "erasures (they name the erased records' commitments, which the copy's new seals would not "
                "match). The journal is sealed already: `waybook erase` works on it as it is; nothing was "
                "migrated"
            )
            raise UsageError(msg)


def copy_sealed(source: SessionJournal, target: SessionJournal, journal_id: str | None = None) -> Record:
    """Append the sealed copy of `source` (checked by `check_migratable`) to the empty `target`; returns
    the target's header."""
    head = GENESIS
    for batch in migrated(source.read(), journal_id=journal_id):
        head = target.append(batch, expected=head).head
    return next(iter(target.read(0, 1)))


def run(args: argparse.Namespace) -> int:
    if args.store is not None:
        if args.to is None or args.output is not None:
            msg = "with --store, give the new journal's id with --to NEW_ID (not -o)"
            raise UsageError(msg)
        with (
            connect_store(args.store) as store,
            store_errors(),
            journal_id_errors(args.store, doing="migrate", to=args.to),
        ):
            with store.open(str(args.path)) as source:
                check_migratable(source)  # before the new journal exists: a refusal leaves nothing
                with store.create(args.to, header=False) as target:
                    header = copy_sealed(source, target, journal_id=args.to)
            where = f"{args.store} {args.to}"
    else:
        if args.output is None or args.to is not None:
            msg = "give the new journal file with -o NEW.jsonl (--to is for --store)"
            raise UsageError(msg)
        if args.output.exists():
            msg = f"-o {args.output}: the file exists; migrate writes a new journal, never over one"
            raise UsageError(msg)
        with open_journal_file(args.path) as source:
            check_migratable(source)  # before the new file exists: a refusal leaves nothing
            with JsonlJournal(args.output) as target:
                header = copy_sealed(source, target)
        where = str(args.output)
    provenance = header.body.metadata[MIGRATED_KEY]  # type: ignore[union-attr]
    if args.json:
        emit_json({"journal": where, "header_digest": header.digest, MIGRATED_KEY: provenance})
    else:
        say(f"{where}: sealed copy of {args.path} (head {provenance['seq']}:{provenance['digest'][:12]})")
    return OK
