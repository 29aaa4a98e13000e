"""Repairing a JSONL journal: quarantine a torn tail and cut the file back to its last whole record.

An explicit host decision: it never runs unless called (`JsonlJournal.repair()`, `waybook repair PATH
--yes`, or an open with `on_torn_tail="repair"`), it never truncates a file whose first line is someone
else's, and it refuses corruption (damage before the final record).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from waybook.journal._jsonl._quarantine import RepairReceipt, is_foreign_first_line, quarantine
from waybook.journal._protocol import Damage
from waybook.model import CorruptJournalError, Head, NotAJournalError, StorageError

if TYPE_CHECKING:
    from waybook.journal._jsonl._file import JournalFile


def no_damage_receipt(name: str, end: int, head: Head) -> RepairReceipt:
    nothing = hashlib.sha256().hexdigest()
    return RepairReceipt(name, end, end, 0, nothing, None, 0, head, "no damage")


def repair_torn_tail(file: JournalFile, damage: Damage, size: int, head: Head) -> RepairReceipt:
    """Move the torn bytes [damage.offset, size) into a quarantine file and truncate the journal to
    `damage.offset` (the exclusive lock held). Refuses corruption and another program's file."""
    name = file.name
    if damage.seq == 1 and damage.offset == 0:
        start = file.ops.pread(file.fd, min(damage.bad_bytes, 1 << 16), 0)
        if is_foreign_first_line(start):
            raise NotAJournalError(path=name, reason=damage.reason)  # never truncate someone's file
    if not damage.torn:
        raise corrupt_error(name, damage)
    digest, copy = quarantine(file.path, name, damage.offset, size, file.chunks)
    try:
        file.ops.truncate(file.fd, damage.offset)
        file.ops.fsync(file.fd)
    except OSError as exc:
        msg = f"{name}: repair could not truncate the torn tail: {exc}; the quarantine copy is kept"
        raise StorageError(msg) from exc
    return RepairReceipt(
        path=name,
        offset=damage.offset,
        end=size,
        removed_bytes=size - damage.offset,
        removed_sha256=digest,
        quarantine_path=str(copy),
        seq=damage.seq,
        head=head,
        reason=damage.reason,
    )


def corrupt_error(name: str, damage: Damage) -> CorruptJournalError:
    return CorruptJournalError(path=name, offset=damage.offset, seq=damage.seq, reason=damage.reason)
