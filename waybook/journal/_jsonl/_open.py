"""The proving side of a `JsonlJournal`: what an open proves, keeping up with other writers, repair.

`ProvedFile` is the base of `JsonlJournal` holding one idea: the committed prefix of the file and the
proof of it. An open restores what a checkpoint vouches for (after hashing the prefix, unless
`trust_checkpoint=True`) and scans the rest; a refresh scans what other writers committed since; damage
found on the way is remembered and refused (`_refuse_damage`); `repair` quarantines a torn tail. The
append and commit side, reads and syncing are `JsonlJournal`'s own (`_journal`).

A writer saves its checkpoint at close; one whose ids are in the compact index (past COMPACT_ABOVE
records), which keeps no id strings, saves it at the end of its open too, from the ids the open
scanned (an `IdLog`), and at close from that checkpoint's text and the ids committed since (another,
smaller `IdLog`): no id string is kept for longer than one open, or past COMPACT_ABOVE of them.
"""

from __future__ import annotations

import threading
from array import array
from pathlib import Path

from waybook._files import FileLock
from waybook.journal._id_index import COMPACT_ABOVE, CompactIdIndex, DictIdIndex, IdLog
from waybook.journal._jsonl import _checkpoint as checkpoint
from waybook.journal._jsonl._checkpoint import NO_IDS, Hasher, Mark, SavedIds
from waybook.journal._jsonl._erase import finish_marker, interrupted, marker_exists
from waybook.journal._jsonl._file import JournalFile
from waybook.journal._jsonl._group_commit import GroupCommit
from waybook.journal._jsonl._quarantine import RepairReceipt
from waybook.journal._jsonl._repair import corrupt_error, no_damage_receipt, repair_torn_tail
from waybook.journal._jsonl._scan import ReadAt, scan
from waybook.journal._ledger import Ledger
from waybook.journal._protocol import Damage
from waybook.journal._roles.memory import role_rules
from waybook.model import JournalClosedError, Record, StorageError, TornTailError


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
    _mark: Mark | None
    """The checkpoint this object saved or loaded last (None: none), which its next save continues."""
    _id_log: IdLog | None
    """The ids committed after `_mark`'s seq, logged by a compact index (one this object made, from the
    time it is made); None for an object that saves no checkpoint, or no longer can."""
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
        base = NO_IDS
        finishing = marker_exists(self._path)  # an erasure a crash interrupted (docs/erasure.md)
        if finishing and self._readonly:
            raise interrupted(self._path)
        self._lock.acquire(exclusive=repair or finishing)
        try:
            if finishing:
                self._file.check_identity()
                finish_marker(self)  # type: ignore[arg-type]
            if self._sidecar:
                base = self._restore_checkpoint()
            self._refresh_locked()
            damage = self._damage
            if damage is not None and damage.torn and repair:
                self.repair_receipt = self._repair_locked()
            elif damage is not None and not damage.torn and not read_prefix:
                raise corrupt_error(self._name, damage)
        finally:
            self._lock.release()
        self._checkpoint_opened(base)
        if self._group is not None:
            self._group.mark_durable(self._end)

    def _restore_checkpoint(self) -> SavedIds:
        """Start from the sidecar checkpoint's proved prefix if it holds for the file's bytes; returns
        its ids as saved (for a save at the end of this open; NO_IDS without a checkpoint)."""
        size = self._file.size()
        prove = not self._trust_checkpoint
        loaded = (
            checkpoint.load(self._path, size=size, read_at=self._read_at, prove_prefix=prove)
            if size
            else None
        )
        if loaded is None or role_rules(self._name, loaded.header) is not None:
            return NO_IDS  # no checkpoint, or a journal whose role has rules the checkpoint does not hold
        self._mark = loaded.mark
        if self._id_log is not None:
            self._id_log = IdLog(loaded.head.seq + 1)  # before restore(), which may compact the ids
        self._ledger.restore(loaded.head, loaded.ids, loaded.leaf, loaded.header)
        self._offsets = loaded.offsets
        self._end = self._size_seen = self._checkpointed = loaded.end
        self._prefix = loaded.prefix  # None after a trusted restore: this object never saves one
        return loaded.saved

    def _checkpoint_opened(self, base: SavedIds) -> None:
        """At the end of a writer's open: if its ids are in the compact index, save the checkpoint now,
        from `base` (the restored checkpoint's ids) and the ids the open scanned after it, which are
        then dropped; from here on, log only the ids committed after the checkpoint on disk."""
        log, self._id_log = self._id_log, None
        if log is None:
            return  # an object that saves no checkpoint
        ids = self._ledger.rules.ids
        if type(ids) is CompactIdIndex:
            ids.log = None
            if self._end != self._checkpointed:
                self._save_checkpoint(base, log)
            if self._end != self._checkpointed:
                return  # not saved: no checkpoint to continue; the next open proves what is past it
        if not self._may_save():
            return
        self._id_log = IdLog(self._mark.seq + 1 if self._mark else 1, limit=COMPACT_ABOVE)
        if type(ids) is CompactIdIndex:
            ids.log = self._id_log

    def _may_save(self) -> bool:
        """Whether a checkpoint saved now could vouch for [0, _end): a proved, undamaged session journal
        at its path, written by this object's rules."""
        return not (
            not self._sidecar
            or self._readonly
            or self._damage is not None
            or self._file.failure is not None
            or self._ledger.rules.role_rules is not None
            or self._prefix is None
        )

    def _save_checkpoint(self, base: SavedIds | None = None, log: IdLog | None = None) -> None:
        """Save the proved prefix for the next open (a writer's close, or the end of its open for
        compact ids; never under damage or failure). Compact ids are `base` (by default the ids of the
        checkpoint this object saved or loaded, re-read) then those `log` holds (by default `_id_log`)."""
        if self._end == self._checkpointed or not self._may_save():
            return
        if not self._file.still_at_path():
            return  # the path was deleted, purged or replaced: a checkpoint would describe no file there
        ids = self._ledger.rules.ids
        head, leaf = self._ledger.head, self._ledger.rules.leaf
        saved = SavedIds.of(ids) if type(ids) is DictIdIndex else self._compact_ids(base, log)
        if saved is None:
            return
        assert self._prefix is not None
        prefix_sha256 = self._prefix.hexdigest()
        written = checkpoint.save(
            self._path,
            end=self._end,
            head=head,
            offsets=self._offsets,
            ids=saved,
            leaf=leaf,
            prefix_sha256=prefix_sha256,
        )
        if written:
            self._checkpointed = self._end
            self._mark = Mark(self._end, head.seq, prefix_sha256)

    def _compact_ids(self, base: SavedIds | None, log: IdLog | None) -> SavedIds | None:
        """Every id of [0, _end) for a compact index, which keeps none: `base`, the ids up to `_mark`'s
        seq, then the log's. None when they are not all in hand: no log, a log that dropped them, or
        a checkpoint on disk that is no longer the one this object saved or loaded."""
        if log is None:
            log = self._id_log
        mark = self._mark
        if log is None or log.ids is None or log.first != (mark.seq + 1 if mark else 1):
            return None
        if log.first + len(log.ids) != self._ledger.head.seq + 1:
            return None  # (every commit is logged: not expected)
        if base is None:
            base = NO_IDS if mark is None else checkpoint.saved_ids(self._path, mark)
        return None if base is None else base.then(log.ids, log.not_nodes)

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
