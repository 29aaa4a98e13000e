"""`DatabaseJournal`: one journal of a database store, over any `Engine`.

Planning and sealing use the journal's `Ledger` and rules, like every adapter; the head compare happens
in the same transaction as the insert (the journal's row locked first); a retried batch that already
committed returns its original result (R7). Record bytes are stored verbatim and proved again on every
read: each line's digest must cover its bytes and chain to the one before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from waybook.codecs import decode_record, line_digest
from waybook.journal import (
    ClosedOnExit,
    ErasingJournal,
    ErasureReceipt,
    ErasureRequest,
    Ledger,
    Plan,
    check_cursor,
    new_id,
    prove_lines,
    utc_now,
)
from waybook.journal._erasure import (
    erasure_check,
    pending_lines,
    plan_erasure,
    receipt_of,
    records_at,
)
from waybook.model import (
    GENESIS,
    GENESIS_DIGEST,
    AppendResult,
    BrokenChainError,
    Head,
    Header,
    JournalClosedError,
    NewRecord,
    Record,
)
from waybook.stores._engine import PAGE, Engine, Transaction
from waybook.stores._errors import JournalPurgedError, LostRecordsError, UnknownJournalError
from waybook.stores._header_id import check_first_header


class DatabaseJournal(ErasingJournal, ClosedOnExit):
    """One journal of a database store. Thread-safe; other processes' commits are seen on each call.

    Cost: append is one write transaction (lock the journal row, read the head, insert); read and
    read_lines stream PAGE records per read transaction and prove each page's chain.
    """

    def __init__(self, engine: Engine, journal_id: str) -> None:
        self._engine = engine
        self._id = journal_id
        self._name = f"{engine.url} {journal_id}"
        self._ledger = Ledger.empty(self._name)
        self._mutex = threading.Lock()
        self._closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def journal_id(self) -> str:
        return self._id

    def head(self) -> Head:
        self._check_open()
        with self._mutex, self._engine.transaction(write=False) as tx:
            self._sync(tx)
            return self._ledger.head

    def position(self) -> tuple[Head, str | None]:
        """The head and the leaf after it (the parent of the next node), read together."""
        self._check_open()
        with self._mutex, self._engine.transaction(write=False) as tx:
            self._sync(tx)
            return self._ledger.head, self._ledger.rules.leaf

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        self._check_open()
        check_first_header(self._engine.url, self._id, records, expected)  # a header names its journal
        with self._mutex:
            with self._engine.transaction(write=True) as tx:
                outcome = self.append_in(tx, records, expected)
            if isinstance(outcome, AppendResult):
                return outcome
            self._ledger.commit(outcome)  # only once the transaction has committed
        self._engine.committed()
        return outcome.result

    def append_in(self, tx: Transaction, records: Sequence[NewRecord], expected: Head) -> Plan | AppendResult:
        """Decide and insert a batch inside `tx` (the journal row locked, the head compared in the same
        transaction). Returns the Plan to `commit_plan` after the transaction commits, or the original
        result of an exact retry. Raises the journal's errors having inserted nothing."""
        self._sync(tx, lock=True)
        plan = self._ledger.plan(records, expected, lambda after, limit: self._committed(tx, after, limit))
        if isinstance(plan, AppendResult):
            return plan
        first = tx.allocate(len(plan.lines))
        rows = [
            (record.seq, first + i, record.digest, line)
            for i, (record, line) in enumerate(zip(plan.result.records, plan.lines, strict=True))
        ]
        tx.insert(self._id, rows)
        return plan

    def commit_plan(self, plan: Plan, tx: Transaction) -> None:
        """Take in a batch `append_in` inserted, once `tx` commits (nothing if it rolls back)."""

        def take() -> None:
            with self._mutex:
                self._ledger.commit(plan)

        tx.after_commit(take)

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        """`erase`'s work here (docs/erasure.md), in one write transaction: the erasure
        records inserted, the taken records' lines rewritten (same digest, same feed position). Then the
        engine scrubs what its log kept (SQLite: the WAL checkpointed and truncated)."""
        self._check_open()
        with self._mutex:
            with self._engine.transaction(write=True) as tx:
                self._sync(tx, lock=True)
                head = self._ledger.head
                found = records_at(
                    lambda after, count: tx.lines(self._id, after, count),
                    request.seqs,
                    lambda line: decode_record(line, where=self._name),
                )
                plan = plan_erasure(self._name, request, found, head, ids=new_id, clock=utc_now)
                journal_id = self._journal_id(tx)
                if not plan.targets:
                    return receipt_of(journal_id, (), (), plan.skipped)
                appended = self.append_in(tx, plan.erasures, head)
                assert isinstance(appended, Plan)
                erased = plan.erased_lines(appended.result.first_seq)
                digests = {target.record.seq: target.record.digest for target in plan.targets}
                tx.replace_lines(self._id, [(seq, digests[seq], line) for seq, line in erased])
                tx.note_erasure()
            self._ledger.commit(appended)
        self._engine.committed()
        self._scrub()
        records = [decode_record(line, where=self._name) for _, line in erased]
        return receipt_of(journal_id, appended.result.records, records, plan.skipped)

    def finish_erasures(self) -> tuple[int, ...]:
        """Scrub what the engine's log kept of an erasure (SQLite's WAL), and erase the records erasure
        records name whose content is still there (none, unless lines were restored by hand)."""
        self._check_open()
        with self._mutex, self._engine.transaction(write=True) as tx:
            self._sync(tx, lock=True)
            head = self._ledger.head
            check = erasure_check(tx.lines(self._id, 0, head.seq) if head.seq else [])
            seqs = sorted(check.pending)
            if seqs:
                found = records_at(
                    lambda after, count: tx.lines(self._id, after, count),
                    seqs,
                    lambda line: decode_record(line, where=self._name),
                )
                erased = pending_lines(self._name, check, found)
                rows = [(seq, decode_record(line, where=self._name).digest, line) for seq, line in erased]
                tx.replace_lines(self._id, rows)
                tx.note_erasure()
        self._scrub()
        return tuple(seqs)

    def _scrub(self) -> None:
        scrub = getattr(self._engine, "scrub", None)
        if callable(scrub):
            scrub()

    def _journal_id(self, tx: Transaction) -> str:
        lines = tx.lines(self._id, 0, 1)
        header = decode_record(lines[0], where=self._name).body if lines else None
        return header.journal if isinstance(header, Header) else self._id

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        self._check_open()
        check_cursor(self._name, after, limit)
        after, limit = _in_range(after, limit)
        return (record for record, _ in self._proved(after, limit))

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self._check_open()
        check_cursor(self._name, after, limit)
        after, limit = _in_range(after, limit)
        return (line for _, line in self._proved(after, limit))

    def stored_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """The stored lines after `after` as they are, a page at a time, not proved: for `verify`, which
        proves them and reports the first bad one (`read_lines` raises at it)."""
        self._check_open()
        check_cursor(self._name, after, limit)
        after, limit = _in_range(after, limit)
        remaining = limit
        while remaining is None or remaining > 0:
            size = PAGE if remaining is None else min(PAGE, remaining)
            with self._engine.transaction(write=False) as tx:
                lines = tx.lines(self._id, after, size)
            yield from lines
            if len(lines) < size:
                return
            after += len(lines)
            if remaining is not None:
                remaining -= len(lines)

    def flush(self) -> None:
        self._check_open()  # every commit is already as durable as the engine's policy makes it

    def close(self) -> None:
        self._closed = True

    def __repr__(self) -> str:
        return f"DatabaseJournal({self._name!r}, head={self._ledger.head})"

    def check_invariants(self) -> None:
        """Assert the stored chain proves and ends at this object's head (stress tests call this)."""
        with self._mutex:
            records = [record for record, _ in self._proved(0, None)]
            assert len(records) == self._ledger.rules.count == self._ledger.head.seq
            assert self._ledger.head == (Head.of(records[-1]) if records else GENESIS)
            assert len(self._ledger.rules.ids) == len(records)

    # --- internals ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._name}: the journal is closed; open it again from its store"
            raise JournalClosedError(msg)

    def _sync(self, tx: Transaction, *, lock: bool = False) -> None:
        """Refuse a purged or vanished journal; take in records other writers committed, proving them."""
        row = tx.journal(self._id, lock=lock)
        if row is None:
            raise UnknownJournalError(store=self._engine.url, journal_id=self._id)
        if row.purged is not None:
            raise JournalPurgedError(store=self._engine.url, journal_id=self._id)
        head = tx.head(self._id)
        known = self._ledger.head
        while head.seq > known.seq:
            lines = tx.lines(self._id, known.seq, PAGE)
            if not lines:  # the head row says more than the rows hold: never wait for rows that are gone
                raise self._lost(head, known.seq)
            records, error = prove_lines(lines, known, self._name)
            self._ledger.advance(records)
            if error is not None:
                raise error
            known = self._ledger.head
        if head != known:
            reason = f"the database's head is {head} but this journal committed through {known}"
            raise BrokenChainError(journal=self._name, seq=head.seq, reason=reason)

    def _lost(self, committed: Head, held: int) -> LostRecordsError:
        found = f"its records end at seq {held}" if held else "it holds no records"
        return LostRecordsError(store=self._engine.url, journal_id=self._id, committed=committed, found=found)

    def _committed(self, tx: Transaction, after: int, limit: int) -> list[Record]:
        return [decode_record(line, where=self._name) for line in tx.lines(self._id, after, limit)]

    def _proved(self, after: int, limit: int | None) -> Iterator[tuple[Record, bytes]]:
        """Committed records after `after` with their lines, each page proved against the one before.

        The first record's own digest is checked against its bytes and its `prev` against the stored
        digest of the record before it."""
        after = max(after, 0)
        remaining = limit
        start: Head | None = None
        committed = GENESIS
        while remaining is None or remaining > 0:
            size = PAGE if remaining is None else min(PAGE, remaining)
            with self._engine.transaction(write=False) as tx:
                if start is None:
                    row = tx.journal(self._id)
                    if row is None:
                        raise UnknownJournalError(store=self._engine.url, journal_id=self._id)
                    if row.purged is not None:
                        raise JournalPurgedError(store=self._engine.url, journal_id=self._id)
                    committed = tx.head(self._id)
                    start = self._anchor(tx, after)
                lines = tx.lines(self._id, after, size)
            records, error = prove_lines(lines, start, self._name)
            yield from zip(records, lines, strict=False)
            if error is not None:
                raise error
            if len(lines) < size:
                held = after + len(lines)
                if held < committed.seq:  # the rows end before the head the store committed
                    raise self._lost(committed, held)
                return
            after += len(lines)
            start = Head.of(records[-1])
            if remaining is not None:
                remaining -= len(lines)

    def _anchor(self, tx: Transaction, seq: int) -> Head:
        """The head at `seq`, from that record's own bytes (proved to cover them)."""
        if seq == 0:
            return GENESIS
        lines = tx.lines(self._id, seq - 1, 1)
        if not lines:
            return Head(seq, GENESIS_DIGEST)  # beyond the end: nothing will be read
        digest = line_digest(lines[0])
        if digest is None:
            raise BrokenChainError(journal=self._name, seq=seq, reason="its digest does not cover its bytes")
        return Head(seq, digest)


_SEQ_MAX = 2**63 - 1


def _in_range(after: int, limit: int | None) -> tuple[int, int | None]:
    """A read cursor clamped to what a database integer holds: past the end reads nothing."""
    return min(max(after, 0), _SEQ_MAX), None if limit is None or limit > _SEQ_MAX else limit
