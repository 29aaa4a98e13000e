"""`waybook repair PATH [--yes]`: quarantine a torn final record (asks first).

Show what a repair would remove: the torn bytes after the last valid record. With --yes (or a 'y' at the
prompt) move them to a quarantine file beside the journal and truncate. Nothing changes without confirmation.
Corruption before the final record is not repairable.

Example: waybook repair session.jsonl --yes
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, warn
from waybook.commands.journal_files import open_journal_file
from waybook.commands.store_option import file_to_repair
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.journal import JsonlJournal, RepairReceipt
from waybook.model import CorruptJournalError


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "repair", __doc__)
    parser.add_argument("--yes", action="store_true", help="repair without asking")
    add_json_option(parser, "print the repair receipt as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.store is not None:
        args.path = file_to_repair(args.store, str(args.path))
        if args.path is None:
            return OK
    # Refuse a directory, a missing file and anything that is not a waybook journal before opening it
    # for writing: repair must never truncate a file that has no valid header to keep.
    try:
        open_journal_file(args.path, keep=False).close()  # a check: keeping its bytes would cost memory
    except CorruptJournalError as exc:
        warn(
            f"{args.path}: corrupt record at seq {exc.seq} (byte {exc.offset}): {exc.reason}. Nothing was "
            "changed: `waybook repair` only quarantines a torn final record, and this damage comes before "
            f"it. `waybook verify {args.path}` names the first bad record; restore the file from a copy."
        )
        return PROBLEM
    with JsonlJournal(args.path, create=False, sidecar=False) as journal:
        damage = journal.damage
        say = warn if args.json else print  # with --json, stdout holds only the JSON document
        if damage is None:
            say(f"{args.path}: no damage; nothing to repair")
            if args.json:
                emit_json(_receipt_json(journal.repair()))
            return OK
        say(
            f"{args.path}: torn tail at byte {damage.offset} (would be seq {damage.seq}): {damage.reason}\n"
            f"repair would move {damage.bad_bytes} bytes to a quarantine file beside the journal and keep "
            f"seq 1..{journal.head().seq}"
        )
        if not args.yes and not _confirmed():
            warn("nothing changed; run again with --yes to repair")
            return PROBLEM
        receipt = journal.repair()
    if args.json:
        emit_json(_receipt_json(receipt))
    else:
        print(
            f"repaired: {receipt.removed_bytes} bytes (sha256 {receipt.removed_sha256[:16]}…) "
            f"moved to {receipt.quarantine_path}"
        )
    return OK


def _receipt_json(receipt: RepairReceipt) -> dict[str, Any]:
    return {
        "path": receipt.path,
        "repaired": receipt.repaired,
        "offset": receipt.offset,
        "end": receipt.end,
        "removed_bytes": receipt.removed_bytes,
        "removed_sha256": receipt.removed_sha256,
        "quarantine_path": receipt.quarantine_path,
        "seq": receipt.seq,
        "head": {"seq": receipt.head.seq, "digest": receipt.head.digest},
    }


def _confirmed() -> bool:
    if not sys.stdin.isatty():
        return False
    sys.stderr.write("quarantine these bytes? [y/N] ")
    sys.stderr.flush()
    return input().strip().lower() in ("y", "yes")
