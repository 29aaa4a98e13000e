"""`waybook gc --store URL [--grace SECONDS]`: remove blobs no journal references, and print the receipt.

Collect a store's blobs: remove each blob that no record of any journal references, that no writer holds a
lease on, and that nobody stored within the grace period. The receipt (what was removed, how many bytes were
freed) is recorded in the store's catalog journal.

Example: waybook gc --store file:sessions --grace 86400 --json
"""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands.common import activity, emit_json, stdout
from waybook.commands.exits import OK, UsageError
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.stores import DEFAULT_GRACE, BlobError


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "gc", __doc__)
    add_store_option(parser, ids=None, required=True)
    parser.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE,
        metavar="SECONDS",
        help=f"keep blobs stored more recently than this (default {DEFAULT_GRACE:.0f})",
    )
    add_json_option(parser, "print the receipt as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.grace < 0:
        msg = f"--grace must be >= 0 seconds, not {args.grace}"
        raise UsageError(msg)
    with connect_store(args.store) as store:
        try:
            with activity("collecting blobs: reading every journal's references"):
                receipt = store.blobs.collect(grace=args.grace)
        except (BlobError, NotImplementedError) as exc:
            raise UsageError(str(exc)) from exc
    if args.json:
        emit_json(receipt.as_json())
        return OK
    console = stdout()
    console.print(
        f"removed {len(receipt.removed)} blob(s), freed {receipt.freed:,} bytes; kept {receipt.referenced} "
        f"referenced, {receipt.leased} leased, {receipt.young} younger than {receipt.grace:g} s "
        f"(receipt: catalog seq {receipt.catalog_seq})"
    )
    for digest in receipt.removed:
        console.print(f"  {digest}")
    return OK
