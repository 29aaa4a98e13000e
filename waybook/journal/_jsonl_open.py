"""The proving side of a `JsonlJournal`: what an open proves, keeping up with other writers, repair.

`ProvedFile` is the base of `JsonlJournal` holding one idea: the committed prefix of the file and the
proof of it. An open restores what a checkpoint vouches for (after hashing the prefix, unless
`trust_checkpoint=True`) and scans the rest; a refresh scans what other writers committed since; damage
found on the way is remembered and refused (`_refuse_damage`); `repair` quarantines a torn tail. The
append and commit side, reads and syncing are `JsonlJournal`'s own (`_jsonl`).
"""

from __future__ import annotations

import threading
from array import array
from pathlib import Path

from waybook.journal import _checkpoint as checkpoint
from waybook.journal._checkpoint import Hasher
from waybook.journal._durability import GroupCommit
from waybook.journal._fileio import FileLock
from waybook.journal._id_index import DictIdIndex
from waybook.journal._jsonl_file import JournalFile
from waybook.journal._jsonl_repair import corrupt_error, no_damage_receipt, repair_torn_tail
from waybook.journal._jsonl_scan import Damage, ReadAt, scan
from waybook.journal._ledger import Ledger
from waybook.journal._quarantine import RepairReceipt
from waybook.journal._roles.memory import role_rules
from waybook.model._errors import JournalClosedError, StorageError, TornTailError
from waybook.model._records import Record


class ProvedFile:
    """The committed, proved prefix of a journal file. Its state is set up by `JsonlJournal.__init__`."""

    _name: str
    _path: Path
    _file: JournalFile
    _read_at: ReadAt
    _lock: FileLock
    _mutex: threading.Lock
    _ledger: Ledger
    _offsets: array[int]
    _end: int
    """Where the committed records end."""
    _size_seen: int
    """The file's size at the last look (append-only: same size, same bytes)."""
    _checkpointed: int
    """The end byte the checkpoint on disk vouches for (0: none known)."""
    _damage: Damage | None
    _prefix: Hasher | None
    """SHA-256 of the bytes [0, _end) as they were proved or written: what a saved checkpoint vouches
    for. Kept only by an object that may save one; None once unknown (damage, a trusted restore)."""
    _keep: list[Record] | None
    _sidecar: bool
    _trust_checkpoint: bool
    _readonly: bool
    _exclusive: bool
    _closed: bool
    _group: GroupCommit | None
    repair_receipt: RepairReceipt | None

    # --- repair ---------------------------------------------------------------------------------------

    def repair(self) -> RepairReceipt:
        """Move a torn tail into a quarantine file beside the journal and truncate to the last record.

        An explicit host decision: it never runs unless called (or opened with on_torn_tail="repair").
        A journal without damage returns a receipt that removed nothing; corruption is refused.
        """
        with self._mutex:
            self._check_writable()
            self._lock.acquire(exclusive=True)
            try:
                self._file.check_identity()
                self._refresh_locked()
                return self._repair_locked()
            finally:
                self._lock.release()

    def _repair_locked(self) -> RepairReceipt:
        damage = self._damage
        if damage is None:
            return no_damage_receipt(self._name, self._end, self._ledger.head)
        receipt = repair_torn_tail(self._file, damage, self._size_seen, self._ledger.head)
        self._damage = None
        self._end = self._size_seen = damage.offset
        if self._group is not None:
            self._group.mark_durable(damage.offset)
        return receipt

    # --- opening and keeping up -------------------------------------------------------------------

    def _open_scan(self, *, read_prefix: bool, repair: bool) -> None:
        self._lock.acquire(exclusive=repair)
        try:
            if self._sidecar:
                self._restore_checkpoint()
            self._refresh_locked()
            damage = self._damage
            if damage is not None and damage.torn and repair:
                self.repair_receipt = self._repair_locked()
            elif damage is not None and not damage.torn and not read_prefix:
                raise corrupt_error(self._name, damage)
        finally:
            self._lock.release()
        if self._group is not None:
            self._group.mark_durable(self._end)

    def _restore_checkpoint(self) -> None:
        """Start from the sidecar checkpoint's proved prefix if it holds for the file's bytes."""
        size = self._file.size()
        prove = not self._trust_checkpoint
        loaded = (
            checkpoint.load(self._path, size=size, read_at=self._read_at, prove_prefix=prove)
            if size
            else None
        )
        if loaded is None or role_rules(self._name, loaded.header) is not None:
            return  # no checkpoint, or a journal whose role has rules the checkpoint does not hold
        self._ledger.restore(loaded.head, loaded.ids, loaded.leaf)
        self._offsets = loaded.offsets
        self._end = self._size_seen = self._checkpointed = loaded.end
        self._prefix = loaded.prefix  # None after a trusted restore: this object never saves one

    def _save_checkpoint(self) -> None:
        """Save the proved prefix for the next open (a writer's close; never under damage or failure)."""
        ids = self._ledger.rules.ids
        if (
            not self._sidecar
            or self._readonly
            or self._end == self._checkpointed
            or self._damage is not None
            or self._file.failure is not None
            or type(ids) is not DictIdIndex
            or self._ledger.rules.role_rules is not None
            or self._prefix is None
        ):
            return
        if not self._file.still_at_path():
            return  # the path was deleted, purged or replaced: a checkpoint would describe no file there
        head, leaf = self._ledger.head, self._ledger.rules.leaf
        saved = checkpoint.save(
            self._path,
            end=self._end,
            head=head,
            offsets=self._offsets,
            ids=ids,
            leaf=leaf,
            prefix_sha256=self._prefix.hexdigest(),
        )
        if saved:
            self._checkpointed = self._end

    def _refresh(self) -> None:
        """Take in records other writers committed since our last look (cheap when nothing changed)."""
        if self._damage is None and (self._exclusive or self._file.size() == self._size_seen):
            return
        with self._mutex:
            self._lock.acquire(exclusive=False)
            try:
                self._refresh_locked()
            finally:
                self._lock.release()

    def _refresh_locked(self) -> None:
        size = self._file.size()
        if size == self._size_seen and self._damage is None:
            return  # append-only: same size, same bytes (only a repair shrinks a file, and only damage)
        if size < self._end:
            self._damage = Damage(
                torn=False,
                offset=size,
                seq=self._ledger.head.seq,
                reason=f"the file shrank from {self._end} to {size} bytes: committed records were removed",
                bad_bytes=0,
            )
            self._size_seen = size
            self._prefix = None
            return
        self._damage = None
        self._end, self._damage = scan(
            self._read_at,
            start=self._end,
            end=size,
            ledger=self._ledger,
            offsets=self._offsets,
            journal=self._name,
            keep=self._keep,
            hasher=self._prefix,
        )
        if self._damage is not None:
            self._prefix = None  # it took in bytes past the committed end: no checkpoint from this object
        self._size_seen = size

    def _refuse_damage(self) -> None:
        damage = self._damage
        if damage is None:
            return
        if damage.torn:
            raise TornTailError(
                path=self._name,
                offset=damage.offset,
                seq=damage.seq,
                reason=damage.reason,
                torn_bytes=damage.bad_bytes,
            )
        raise corrupt_error(self._name, damage)

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._name}: the journal is closed; open it again to continue"
            raise JournalClosedError(msg)

    def _check_writable(self) -> None:
        self._check_open()
        if self._readonly:
            msg = f"{self._name}: opened read-only; open it without readonly=True to write or repair"
            raise StorageError(msg)
        if self._file.failure is not None:
            raise self._file.failed_error()
