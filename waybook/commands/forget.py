"""`waybook hide` and `waybook purge`: take a journal out of a store's listings, or erase it with a receipt.

Both act through the store's own `hide`/`purge`, which record what they did (who, why, when, and for a
purge the erased journal's head and record count) in the store's catalog journal before anything is
erased: an interrupted purge is finished by the store's next open. `--dry-run` shows what a purge would
erase and writes nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, UsageError, check_recorded, warn
from waybook.commands.store_option import add_store_option, connect_store, open_in_store, store_errors
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import say
from waybook.stores import JournalPurgedError, UnknownJournalError


def register(commands: argparse._SubParsersAction[Any]) -> None:
    hide = add_command(commands, "hide", run_hide.__doc__)
    _common(hide, "hidden")
    hide.set_defaults(run=run_hide)
    purge = add_command(commands, "purge", run_purge.__doc__)
    _common(purge, "erased")
    purge.add_argument("--dry-run", action="store_true", help="show what would be erased and write nothing")
    purge.set_defaults(run=run_purge)


def _common(parser: argparse.ArgumentParser, done: str) -> None:
    add_store_option(parser, ids="ID", required=True)
    parser.add_argument("journal_id", metavar="ID", help="the journal's id in the store")
    parser.add_argument(
        "--reason", required=True, help=f"why it is {done} (kept in the store's catalog for auditors)"
    )
    parser.add_argument("--actor", default=None, help="who asks (kept with the reason)")
    add_json_option(parser, "print the catalog record as JSON")


def _unknown(args: argparse.Namespace) -> int:
    """An unknown journal is a problem (exit 1), as for every command that reads one by id."""
    warn(
        f"no journal {args.journal_id!r} in --store {args.store}; `waybook ls --store {args.store}` lists "
        "its journals (`--hidden` the hidden ones)"
    )
    return PROBLEM


def _check_recorded(args: argparse.Namespace) -> None:
    if not args.reason.strip():
        msg = "--reason must say why (a short text the store's catalog keeps for auditors), not be empty"
        raise UsageError(msg)
    check_recorded("--actor", args.actor, what="who asks")


def run_hide(args: argparse.Namespace) -> int:
    """`waybook hide --store URL ID --reason TEXT`: hide a journal from a store's listings (kept, and still
    readable by id).

    Hide a journal: `waybook ls` leaves it out (`ls --hidden` lists it), its records stay as they are and
    `show --store URL ID` still reads them. The store's catalog journal records who hid it and why.

    Example: waybook hide --store file:sessions s-0042 --reason 'test run, not a real session'
    """
    _check_recorded(args)
    with connect_store(args.store) as store, store_errors():
        try:
            record = store.hide(args.journal_id, reason=args.reason, actor=args.actor)
        except UnknownJournalError:
            return _unknown(args)
        except JournalPurgedError as exc:
            msg = f"{args.journal_id} was purged from --store {args.store}: there is nothing left to hide"
            raise UsageError(msg) from exc
    if args.json:
        emit_json({"journal": args.journal_id, "hidden": True, "catalog_seq": record.seq, "at": record.at})
        return OK
    say(f"hid {args.journal_id} (catalog seq {record.seq}); `waybook ls --hidden` lists it")
    return OK


def run_purge(args: argparse.Namespace) -> int:
    """`waybook purge --store URL ID --reason TEXT [--dry-run]`: erase a whole journal from a store, leaving a
    receipt in the catalog.

    Erase a journal: every record of it is removed from the store. First the store's catalog journal
    records a receipt (the journal's role, head digest and record count, the reason, the actor, the
    time), so an auditor can prove what existed without seeing it; an interrupted purge is finished by
    the store's next open. Its blobs are freed by the next `waybook gc`.

    Example: waybook purge --store file:sessions s-0042 --reason 'GDPR request 2026-118' --json
    """
    _check_recorded(args)
    if args.dry_run:
        return _dry_run(args)
    with connect_store(args.store) as store, store_errors():
        try:
            receipt = store.purge(args.journal_id, reason=args.reason, actor=args.actor)
        except UnknownJournalError:
            return _unknown(args)
    document = receipt.as_json()
    if args.json:
        emit_json(document)
        return OK
    say(
        f"erased {receipt.journal_id}: {receipt.records} record(s), head {receipt.head.digest[:16]} at seq "
        f"{receipt.head.seq}; receipt at catalog seq {receipt.catalog_seq} (digest {receipt.digest[:16]})"
    )
    return OK


def _dry_run(args: argparse.Namespace) -> int:
    """What a purge would erase, read through a read-only open (which writes nothing, not even a
    checkpoint)."""
    try:
        with open_in_store(args.store, args.journal_id) as journal:
            head = journal.head()
    except UnknownJournalError:
        return _unknown(args)
    except JournalPurgedError as exc:
        msg = f"{args.journal_id} was purged already; nothing would be erased"
        raise UsageError(msg) from exc
    if args.json:
        emit_json(
            {
                "journal": args.journal_id,
                "head": {"seq": head.seq, "digest": head.digest},
                "records": head.seq,
                "dry_run": True,
            }
        )
    else:
        say(
            f"would erase {args.journal_id}: {head.seq} record(s), head {head.digest[:16]}; "
            "nothing was written"
        )
    return OK
