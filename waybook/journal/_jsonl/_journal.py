"""`JsonlJournal`: the embedded default store. One journal per file, one canonical record per line.

Cross-process safe: every append takes an exclusive `flock` on the journal file itself, reads any tail
other writers committed, compares the expected head, writes the batch with one write loop on an
O_APPEND descriptor, checks that the path still names that file, applies the durability policy, and
releases.
Readers see other writers' records on their next call; `read(after=seq)` seeks through a byte-offset
index and never rescans from the start.

An open proves what it serves: every byte from the start, or, with the `.checkpoint` sidecar a writer
left (`_checkpoint`), that no byte of the prefix it proved changed (one SHA-256 pass) and the tail after
it. Damage is detected on open and refused: a torn final record blocks appends until an explicit
`repair()` (which quarantines the torn bytes); damage before the final record is corruption, readable
only through `read_prefix=True`. See docs/jsonl.md for the caveats.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar, Unpack

import attrs

from waybook._files import EXCLUSIVE_NOW, create_atomically, fsync_dir, os_reason
from waybook.codecs import decode_record, line_digest
from waybook.journal._clock import new_id, utc_now
from waybook.journal._closing import ClosedOnExit
from waybook.journal._durability import Durability
from waybook.journal._erasure import ErasingJournal, ErasureReceipt, ErasureRequest
from waybook.journal._id_index import CompactIdIndex, DictIdIndex, IdLog
from waybook.journal._jsonl._checkpoint import Hasher, Mark
from waybook.journal._jsonl._erase import erase as erase_in_place
from waybook.journal._jsonl._erase import finish_marker, finish_pending
from waybook.journal._jsonl._file import JournalFile
from waybook.journal._jsonl._file_ops import KeptReads
from waybook.journal._jsonl._group_commit import GroupCommit
from waybook.journal._jsonl._open import ProvedFile
from waybook.journal._jsonl._options import JsonlKeywords, JsonlOptions
from waybook.journal._jsonl._quarantine import RepairReceipt
from waybook.journal._jsonl._scan import read_exactly
from waybook.journal._ledger import Ledger, Plan, decode_records, iter_chain, prove_lines
from waybook.journal._protocol import Damage
from waybook.journal._reading import check_cursor
from waybook.journal._verify import VerifyReport, erasure_report
from waybook.model import (
    GENESIS,
    SEALED_SCHEMA,
    AppendResult,
    BrokenChainError,
    CorruptJournalError,
    DurabilityError,
    Head,
    Header,
    NewRecord,
    Record,
    StorageError,
)

_T = TypeVar("_T")


class JsonlJournal(ProvedFile, ErasingJournal, ClosedOnExit):
    """A journal in a JSONL file. See the module docstring and docs/jsonl.md.

    Its options are one `JsonlOptions` value (`options=`), or the same fields as keywords
    (`JsonlJournal(path, durability="fsync", readonly=True)`); not both. Each field's meaning and
    default is `JsonlOptions`'.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        options: JsonlOptions | None = None,
        _decoded: list[Record] | None = None,
        _log_erasures: bool = False,
        **keywords: Unpack[JsonlKeywords],
    ) -> None:
        self._options = opened = JsonlOptions.of(options, keywords)
        readonly, sidecar, exclusive = opened.readonly, opened.sidecar, opened.exclusive
        trust_checkpoint = opened.trust_checkpoint
        self._exclusive = exclusive
        self._sidecar = sidecar
        self._trust_checkpoint = trust_checkpoint
        self._prefix: Hasher | None = hashlib.sha256() if sidecar and not readonly else None
        self._checkpointed = 0  # the end byte the checkpoint on disk vouches for (0: none known)
        self._mark: Mark | None = None
        # A writer that saves checkpoints logs the ids its open scans, in case they are compacted.
        saves = sidecar and not readonly and not trust_checkpoint
        self._id_log: IdLog | None = IdLog(1) if saves else None
        self._path = Path(path)
        self._name = str(self._path)
        self._durability = opened.durability
        self._fsync_each = self._durability is Durability.FSYNC
        self._group_commit = self._durability is Durability.GROUP
        self._syncs_creation = self._fsync_each or self._group_commit
        self._ops = opened.file_ops
        self._mutex = threading.Lock()
        self._ledger = Ledger.empty(self._name, compact_ids=self._compact_index)
        if _log_erasures:  # a proving open (open_proven): the erasure proof reads the log, not the file
            self._ledger.erasure_log = []
        self._offsets: array[int] = array("Q")
        self._keep = _decoded  # the records the open decodes go here too (open_decoded)
        self._end = 0
        self._size_seen = 0
        self._damage: Damage | None = None
        self._closed = False
        self._readonly = readonly
        # Under `flush`, what flush()/close() owe: an fsync of the file (bytes written since the last
        # one) and of its directory (a creation not yet synced). Other policies never owe anything.
        self._unsynced = self._unsynced_dir = False
        self.repair_receipt: RepairReceipt | None = None
        if self._ops.identity(self._path) is None:
            if not opened.create or readonly:
                msg = f"{self._path}: no such journal; pass create=True to create an empty one"
                raise StorageError(msg)
            try:
                created = create_atomically(self._path, b"", durable=self._syncs_creation)
                self._unsynced_dir = created and not self._syncs_creation
            except OSError as exc:
                msg = f"{self._path}: cannot create the journal: {os_reason(exc)}"
                raise StorageError(msg) from exc
        # Only the group policy shares fsyncs; the others never touch it, so it is built only for it.
        self._group: GroupCommit | None = None
        if self._group_commit:
            self._group = GroupCommit(self._fsync, name=self._name, window=opened.group_window)
        flags = os.O_RDONLY if readonly else os.O_RDWR | os.O_APPEND
        self._file = file = JournalFile(self._ops, self._path, self._name, flags)
        self._read_at = file.read_at
        self._lock = file.lock
        try:
            if exclusive:
                self._lock.hold()
            repair = opened.on_torn_tail == "repair" and not readonly
            self._open_scan(read_prefix=opened.read_prefix, repair=repair)
        except BaseException:
            self._release_files()
            raise
        finally:
            self._keep = None

    @classmethod
    def open_decoded(
        cls,
        path: str | os.PathLike[str],
        *,
        options: JsonlOptions | None = None,
        **keywords: Unpack[JsonlKeywords],
    ) -> tuple[JsonlJournal, list[Record]]:
        """Open the journal and return every committed record with it, each decoded once.

        The records the open decoded to prove the file are kept rather than decoded again by a later
        `read()`; a replay of the whole session at open costs one decode per record. It holds every
        record in memory: meant for sessions, not for million-record files.
        """
        journal, kept, _ = cls.open_decoded_proved(path, options=options, **keywords)
        return journal, kept

    @classmethod
    def open_decoded_proved(
        cls,
        path: str | os.PathLike[str],
        *,
        options: JsonlOptions | None = None,
        **keywords: Unpack[JsonlKeywords],
    ) -> tuple[JsonlJournal, list[Record], bool]:
        """`open_decoded`, and whether this open decoded and proved every one of the records (chain,
        batches, rules) rather than reading a prefix that a checkpoint vouched for."""
        kept: list[Record] = []
        journal = cls(path, options=options, _decoded=kept, **keywords)
        first = kept[0].seq if kept else journal._ledger.head.seq + 1
        if first > 1:  # records the open did not decode (a checkpoint vouched for them)
            kept[:0] = journal.read(after=0, limit=first - 1)
        return journal, kept, first == 1

    @classmethod
    def open_proven(
        cls,
        path: str | os.PathLike[str],
        *,
        keep: bool = True,
        options: JsonlOptions | None = None,
        **keywords: Unpack[JsonlKeywords],
    ) -> tuple[JsonlJournal, VerifyReport]:
        """Open the journal read-only with the report of what the open proved: one pass over the file
        gives the journal and the chain report (`verify_file`'s).

        Every byte is proved unless `sidecar=True` (then a checkpoint's prefix is proved by its hash, as
        a default open does; keywords default to `sidecar=False`). A corrupt file raises
        CorruptJournalError unless `read_prefix=True`, which opens its proven prefix. With `keep` (the
        default) the journal's reads are served from the bytes the open read (`KeptReads`, up to
        KEEP_LIMIT), so a read command reads the file from the disk once; it holds them until closed.
        """
        if options is None:
            keywords.setdefault("sidecar", False)
        opened = JsonlOptions.of(options, keywords)
        ops = KeptReads(opened.file_ops) if keep else opened.file_ops
        opened = attrs.evolve(opened, readonly=True, durability=Durability.NONE, file_ops=ops)
        journal = cls(path, options=opened, _log_erasures=True)
        if isinstance(ops, KeptReads):
            ops.hold(journal._end)
        report = proof_report(journal)
        journal._ledger.erasure_log = None
        return journal, report

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        *,
        journal_id: str,
        creator: str = "waybook",
        metadata: dict[str, Any] | None = None,
        record_id: str | None = None,
        at: str | None = None,
        options: JsonlOptions | None = None,
        **keywords: Unpack[JsonlKeywords],
    ) -> JsonlJournal:
        """Create a new journal file whose first line is its header, atomically; refuse an existing file.

        The options (`options=` or keywords, as for `JsonlJournal(path)`) are checked before the file is
        created; `create` is set to False for the open that follows."""
        from waybook.codecs import seal
        from waybook.model import GENESIS_DIGEST

        opened = attrs.evolve(JsonlOptions.of(options, keywords), create=False)
        header = Header(
            journal=journal_id, creator=creator, metadata=dict(metadata or {}), schema=SEALED_SCHEMA
        )
        new = NewRecord(id=record_id or new_id(), at=at or utc_now(), body=header)
        Ledger.empty(str(path)).rules.check((new,))
        _, line = seal(1, new, GENESIS_DIGEST)
        target = Path(path)
        # Only the policies that promise durability per append pay for it at creation; under `flush`
        # the first flush()/close() syncs the file and its directory, under `none` nothing does.
        durable = opened.durability in (Durability.FSYNC, Durability.GROUP)
        try:
            created = create_atomically(target, line + b"\n", durable=durable)
        except OSError as exc:
            msg = f"{target}: cannot create the journal: {os_reason(exc)}"
            raise StorageError(msg) from exc
        if not created:
            msg = f"{target}: a file already exists there; open it with JsonlJournal(path) instead"
            raise StorageError(msg)
        journal = cls(target, options=opened)
        journal._unsynced = journal._unsynced_dir = not durable
        return journal

    @classmethod
    def create_holding(
        cls,
        path: str | os.PathLike[str],
        records: Sequence[NewRecord],
        *,
        options: JsonlOptions | None = None,
        **keywords: Unpack[JsonlKeywords],
    ) -> JsonlJournal:
        """Create a new journal file holding `records` (a header first) as its first batch, atomically:
        every rule is checked and the bytes sealed before the file exists, and the file appears whole or
        not at all. Refuses an existing file (StorageError). Options as for `JsonlJournal(path)`."""
        from waybook.model import GENESIS

        opened = attrs.evolve(JsonlOptions.of(options, keywords), create=False)
        target = Path(path)
        plan = Ledger.empty(str(target)).plan(records, GENESIS, lambda _after, _limit: ())
        if not isinstance(plan, Plan):  # (a retry of a committed batch: an empty ledger has none)
            raise TypeError(plan)
        durable = opened.durability in (Durability.FSYNC, Durability.GROUP)
        try:
            created = create_atomically(
                target, b"".join(line + b"\n" for line in plan.lines), durable=durable
            )
        except OSError as exc:
            msg = f"{target}: cannot create the journal: {os_reason(exc)}"
            raise StorageError(msg) from exc
        if not created:
            msg = (
                f"{target}: a file already exists there; give a new path, or open it with JsonlJournal(path)"
            )
            raise StorageError(msg)
        journal = cls(target, options=opened)
        journal._unsynced = journal._unsynced_dir = not durable
        return journal

    # --- the SessionJournal protocol ----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def path(self) -> Path:
        return self._path

    @property
    def durability(self) -> Durability:
        return self._durability

    @property
    def options(self) -> JsonlOptions:
        """The options this journal was opened with (keywords given are folded into one value)."""
        return self._options

    @property
    def damage(self) -> Damage | None:
        """The first bad bytes found (a torn tail, or corruption under read_prefix), else None."""
        return self._damage

    def head(self) -> Head:
        self._check_open()
        self._refresh()
        return self._ledger.head

    def position(self) -> tuple[Head, str | None]:
        """The head and the leaf after it (the parent of the next node), read together."""
        self._check_open()
        self._refresh()
        with self._mutex:
            return self._ledger.head, self._ledger.rules.leaf

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        """Commit `records` after `expected` (compare-and-append), or raise having written nothing.

        One path for every batch: under the mutex and the exclusive file lock, take in what other
        writers committed, plan (seal and check) the batch, write its lines with one write loop, check
        the path still names this file (one stat; a deleted or replaced file gets the bytes cut off
        again and the append raises JournalReplacedError), commit, then apply the durability policy
        (under `group`, wait for the shared fsync after releasing the lock). An exact retry of a
        committed batch returns its original result.
        """
        with self._mutex:
            file = self._file
            if self._closed or self._readonly or file.failure is not None:
                self._check_writable()
            lock = self._lock
            exclusive = self._exclusive  # (then the lock is held for good: nothing to take or release)
            if not exclusive:  # FileLock.acquire and release inline: one flock call each
                try:
                    fcntl.flock(file.fd, EXCLUSIVE_NOW)
                except OSError:  # taken by another writer (or an error): wait, or raise the typed error
                    lock.acquire(exclusive=True)
            try:
                if (not exclusive and file.size() != self._size_seen) or self._damage:
                    self._refresh_locked()  # another writer committed, or there is damage to report
                    self._refuse_damage()
                ledger = self._ledger
                one = ledger.plan_one(records, expected)
                if one is None:  # a batch, a retry or a refusal: the general path
                    result, written = self._append_planned(records, expected)
                    if written is None:
                        return result  # an exact retry: its original result
                    end = written
                else:  # one record at the head (nearly every append), kept flat
                    result, line, delta = one
                    data = line + b"\n"
                    end = self._end
                    file.write(data, end, result.prior, result)
                    if self._prefix is not None:
                        self._prefix.update(data)
                    ledger.commit_one(result, delta)
                    self._offsets.append(end)
                    end += len(data)
                    self._end = self._size_seen = end
                    self._unsynced = True
                    if self._fsync_each:
                        file.fsync(result.head, result)
            finally:
                if not exclusive:
                    try:  # noqa: SIM105 (not contextlib.suppress: this runs on every append)
                        fcntl.flock(file.fd, fcntl.LOCK_UN)
                    except OSError:  # only on a closed descriptor, which holds no lock
                        pass
        if self._group is not None:
            self._group.written(end)
            try:
                self._group.wait_durable(end)
            except DurabilityError as exc:
                cause = exc.__cause__
                while isinstance(cause, DurabilityError):  # the leader's own error; its cause is the OSError
                    cause = cause.__cause__
                raise file.durability_failed(cause or exc, self._ledger.head, result) from exc
        return result

    def _append_planned(
        self, records: Sequence[NewRecord], expected: Head
    ) -> tuple[AppendResult, int | None]:
        """`append`'s general path (under the mutex and the lock): plan, write the lines with one write
        loop, commit. Returns the result and where the committed bytes now end, or an exact retry's
        original result and None (nothing written)."""
        ledger = self._ledger
        plan = ledger.plan(records, expected, self._records_range)
        if type(plan) is AppendResult:
            return plan, None
        assert isinstance(plan, Plan)
        result = plan.result
        lines = plan.lines
        end = self._end
        data = b"\n".join(lines) + b"\n"
        self._file.write(data, end, ledger.head, result)
        offsets = self._offsets
        for line in lines:
            offsets.append(end)
            end += len(line) + 1
        if self._prefix is not None:
            self._prefix.update(data)
        ledger.commit(plan)
        self._end = self._size_seen = end
        self._unsynced = True
        if self._fsync_each:
            self._file.fsync(ledger.head, result)
        return result, end

    # --- erasure (docs/erasure.md) -------------------------------------------------------------------

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        """`erase`'s work here: append the erasure record, then overwrite each taken record's content in
        place under the exclusive lock. A pending erasure (its record committed, its records' content still
        there: an eraser killed and its marker lost) is finished first, as `finish_erasures` would: a new
        erasure taking one of its records would leave it naming a record it did not erase."""

        def work() -> ErasureReceipt:
            finish_pending(self)
            return erase_in_place(self, request)

        return self._erasing(work)

    def finish_erasures(self) -> tuple[int, ...]:
        """Finish what an interrupted erasure left: the marker's regions, and any record an erasure record
        names whose content is still there (a pending erasure). Returns the seqs it erased."""
        return self._erasing(lambda: finish_pending(self))

    def _erasing(self, work: Callable[[], _T]) -> _T:
        with self._mutex:
            self._check_writable()
            self._lock.acquire(exclusive=True)
            try:
                self._file.check_identity()
                finish_marker(self)
                self._refresh_locked()
                self._refuse_damage()
                return work()
            finally:
                self._lock.release()

    def _lines_in(self, after: int, count: int) -> list[bytes]:
        """The committed lines of seqs after+1 .. after+count (the caller holds the mutex)."""
        stop = min(len(self._offsets), after + count)
        if after >= stop:
            return []
        end = self._offsets[stop] if stop < len(self._offsets) else self._end
        return [line for lines in self._file.line_chunks(self._offsets[after], end) for line in lines]

    def _forget_prefix(self) -> None:
        """Bytes of the committed prefix changed (an erasure): no checkpoint this object saved or loaded
        vouches for them any more, and none is saved from what it hashed before."""
        self._prefix = None
        self._checkpointed = 0
        self._mark = None
        self._id_log = None
        ids = self._ledger.rules.ids
        if isinstance(ids, CompactIdIndex):
            ids.log = None

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        """Committed records after `after`, a chunk of lines (up to 1 MiB) at a time, each chunk proved
        as it is read (see `read_proved`)."""
        chunks = self._proved_chunks(self._read_range(after, limit))  # the range is fixed now
        return (record for records, _ in chunks for record in records)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """The stored lines of the committed records after `after`, proved as `read` proves them."""
        chunks = self._proved_chunks(self._read_range(after, limit))
        return (line for _, lines in chunks for line in lines)

    def read_proved(self, after: int = 0, limit: int | None = None) -> Iterator[tuple[Record, bytes]]:
        """Each committed record after `after` with its stored line, proved on the way.

        A reader serves only bytes it proved, for its whole life: the bytes read from the file now are
        proved again (every line's digest covers its bytes and follows the one before, from the stored
        record `after`, whose digest must cover its bytes too; a range that reaches the committed end
        must end at the head this journal proved). A record changed after the open proved it (or after
        this object wrote it) raises BrokenChainError naming its seq, after the records before it.
        Bytes kept in memory from the proving pass (`open_proven`) cannot change and are not proved
        again. Cost: one SHA-256 of every line read, and one line more read when `after` > 0."""
        chunks = self._proved_chunks(self._read_range(after, limit))
        return (pair for records, lines in chunks for pair in zip(records, lines, strict=False))

    def _read_range(self, after: int, limit: int | None) -> _ReadRange:
        """What a read will read: records [first, stop) as bytes [start, end), with the bytes of the
        record before them (the anchor) and the head that ends them if they reach the committed end."""
        check_cursor(self._name, after, limit)
        self._check_open()
        self._refresh()
        with self._mutex:
            count = len(self._offsets)
            first = min(max(after, 0), count)
            stop = count if limit is None else min(count, first + max(limit, 0))
            if first >= stop:
                return _ReadRange(first, 0, 0, 0, None)
            offsets = self._offsets
            end = offsets[stop] if stop < count else self._end
            anchor = offsets[first - 1] if first else offsets[0]
            return _ReadRange(
                first, anchor, offsets[first], end, self._ledger.head if stop == count else None
            )

    def _proved_chunks(self, span: _ReadRange) -> Iterator[tuple[list[Record], list[bytes]]]:
        """The records of `span` with their lines, a chunk at a time, each chunk proved (read_proved)."""
        if span.start == span.end:
            return
        name, file = self._name, self._file
        ops = self._ops
        if isinstance(ops, KeptReads) and ops.holds(span.end):  # proved bytes, in memory since
            for lines in file.line_chunks(span.start, span.end):
                yield decode_records(lines, name), lines
            return
        chain = GENESIS
        anchored = span.first == 0
        for lines in file.line_chunks(span.anchor if not anchored else span.start, span.end):
            if not anchored:
                anchored, digest = True, line_digest(lines[0])
                if digest is None:
                    reason = "its bytes changed after they were proved: its digest no longer covers them"
                    raise BrokenChainError(journal=name, seq=span.first, reason=reason)
                chain = Head(span.first, digest)
                del lines[0]
            records, error = prove_lines(lines, chain, name)
            yield records, lines[: len(records)]
            if error is not None:
                raise error
            if records:
                chain = Head.of(records[-1])
        if span.head is not None and chain != span.head:
            reason = f"the file's records end at {chain}, not at the head {span.head} this journal proved"
            raise BrokenChainError(journal=name, seq=span.head.seq, reason=reason)

    def flush(self) -> None:
        self._check_open()
        if self._durability is Durability.FLUSH:
            with self._mutex:
                self._sync_owed()

    def close(self) -> None:
        if self._closed:
            return
        try:
            if self._durability is Durability.FLUSH and self._file.failure is None:
                with self._mutex:
                    self._sync_owed()
            with self._mutex:
                self._save_checkpoint()
        finally:
            self._closed = True
            self._release_files()

    def __repr__(self) -> str:
        return f"JsonlJournal({self._name!r}, head={self._ledger.head}, durability={self._durability})"

    def check_invariants(self) -> None:
        """Assert the offset index, the ledger and the file agree; stress tests call this after each step."""
        with self._mutex:
            offsets = list(self._offsets)
            assert offsets == sorted(set(offsets)), "offsets strictly increase"
            assert len(offsets) == self._ledger.rules.count == self._ledger.head.seq
            assert self._end <= self._size_seen <= self._file.size() or self._damage is not None
            lines = list(self._lines_between(0, self._end))
            assert list(accumulate((len(x) + 1 for x in lines[:-1]), initial=0))[: len(lines)] == offsets
            records = list(iter_chain(lines, journal=self._name))
            assert self._ledger.head == (Head.of(records[-1]) if records else GENESIS)
            ids = self._ledger.rules.ids
            assert len(ids) == len(records)
            if isinstance(ids, CompactIdIndex):
                ids.check_invariants()
                assert all(ids.seq_of(r.id) == r.seq for r in records)
                log = ids.log
                if log is not None and log.ids is not None:  # the ids committed after the checkpoint
                    assert log is self._id_log
                    assert log.ids == [r.id for r in records[log.first - 1 :]]
                    assert log.not_nodes == [r.seq for r in records[log.first - 1 :] if not r.body.IS_NODE]
            else:
                assert isinstance(ids, DictIdIndex)
                assert list(ids) == [r.id for r in records]  # commit order: what compacting relies on

    def _records_range(self, after: int, limit: int) -> list[Record]:
        count = len(self._offsets)
        stop = min(count, after + limit)
        if after >= stop:
            return []
        end = self._offsets[stop] if stop < count else self._end
        return [
            record
            for lines in self._file.line_chunks(self._offsets[after], end)
            for record in decode_records(lines)
        ]

    def _compact_index(self) -> CompactIdIndex:
        """The index the ids move to past COMPACT_ABOVE; it logs the ids it takes in to `_id_log`."""
        return CompactIdIndex(self._committed_id, log=self._id_log)

    def _committed_id(self, seq: int) -> tuple[str, bool]:
        """The id of committed record `seq` and whether it is a node: read back to confirm an id match."""
        offset = self._offsets[seq - 1]
        stop = self._offsets[seq] if seq < len(self._offsets) else self._end
        line = read_exactly(self._read_at, offset, stop - offset - 1)
        if len(line) != stop - offset - 1:
            msg = f"the file ended inside committed record {seq}"
            raise CorruptJournalError(path=self._name, offset=offset, seq=seq, reason=msg)
        record = decode_record(line, where=self._name)
        return record.id, record.body.IS_NODE

    def _lines_between(self, start: int, end: int) -> Iterator[bytes]:
        for lines in self._file.line_chunks(start, end):
            yield from lines

    def _sync_owed(self) -> None:
        """Under `flush`: fsync what this object wrote since its last fsync, and a new file's directory."""
        file = self._file
        if file.failure is not None:
            raise file.failed_error()
        head = self._ledger.head
        if self._unsynced_dir:
            file.sync_with_directory(head, file=self._unsynced, sync_dir=fsync_dir)
            self._unsynced = self._unsynced_dir = False
        elif self._unsynced:
            file.fsync(head)
            self._unsynced = False

    def _fsync(self) -> None:
        """The group policy's shared fsync (GroupCommit calls it)."""
        self._file.fsync(self._ledger.head)

    def _release_files(self) -> None:
        self._file.close()


@attrs.frozen
class _ReadRange:
    """The records [first, stop) a read serves: their bytes [start, end), where the line of record
    `first` (the anchor, whose digest the first line's prev must be) starts, and the head they must end
    at (None unless they reach the committed end)."""

    first: int
    anchor: int
    start: int
    end: int
    head: Head | None


def verify_file(path: str | os.PathLike[str]) -> VerifyReport:
    """Verify a JSONL journal file without changing it; the report names the first bad seq and byte."""
    journal, report = JsonlJournal.open_proven(path, read_prefix=True, keep=False)
    journal.close()
    return report


def proof_report(journal: JsonlJournal) -> VerifyReport:
    """What `journal`'s open proved, as `verify` reports it: its head, and its damage if it has any."""
    head = journal.head()
    damage = journal.damage
    if damage is None:
        return erasure_report(journal, journal._ledger, journal.name)
    kind = "torn tail" if damage.torn else "corruption"
    bad = damage.bad_record or damage.seq
    batch = "" if damage.bad_record is None else f"; its batch is uncommitted from seq {damage.seq}"
    return VerifyReport(
        journal.name,
        ok=False,
        records=head.seq,
        head=head,
        bad_seq=bad,
        reason=f"{kind}: {damage.reason} ({damage.bad_bytes} bytes from byte {damage.offset}{batch})",
        offset=damage.offset,
        torn_tail=damage.torn,
    )
