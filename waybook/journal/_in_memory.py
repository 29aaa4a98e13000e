"""`InMemoryJournal`: the reference adapter. Tests, models and the conformance suite compare against it."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence

from waybook.codecs import decode_record
from waybook.journal._batches import CLOSED, cut_batch_reason, whole_batches
from waybook.journal._clock import new_id, utc_now
from waybook.journal._closing import ClosedOnExit
from waybook.journal._erasure import (
    ErasingJournal,
    ErasureReceipt,
    ErasureRequest,
    plan_erasure,
    receipt_of,
    records_at,
)
from waybook.journal._ledger import Ledger, Plan, iter_chain
from waybook.journal._reading import check_cursor
from waybook.model import (
    GENESIS,
    AppendResult,
    BrokenBatchError,
    Head,
    Header,
    JournalClosedError,
    NewRecord,
    Record,
)


class InMemoryJournal(ErasingJournal, ClosedOnExit):
    """A journal held in a list. Thread-safe: appends are serialised by one lock.

    Cost: append O(batch), head O(1), read O(returned records).
    """

    def __init__(self, name: str = "memory") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._records: list[Record] = []
        self._lines: list[bytes] = []
        self._ledger = Ledger.empty(name)
        self._closed = False

    @classmethod
    def from_lines(cls, lines: Iterable[bytes], *, name: str = "memory") -> InMemoryJournal:
        """Load committed canonical lines (an archive, a fixture), proving the chain, batches and rules."""
        journal = cls(name)
        lines = [line.rstrip(b"\n") for line in lines]
        records = list(iter_chain(lines, journal=name))
        whole, state = whole_batches(records, journal=name)
        if state != CLOSED:
            first = records[whole].seq
            raise BrokenBatchError(journal=name, seq=first, reason=cut_batch_reason(first, state))
        journal._ledger.advance(records)
        journal._records = records
        journal._lines = lines
        return journal

    @property
    def name(self) -> str:
        return self._name

    def head(self) -> Head:
        self._check_open()
        return self._ledger.head

    def position(self) -> tuple[Head, str | None]:
        """The head and the leaf after it (the parent of the next node), read together."""
        self._check_open()
        with self._lock:
            return self._ledger.head, self._ledger.rules.leaf

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        with self._lock:
            self._check_open()
            ledger = self._ledger
            plan = ledger.plan(records, expected, self._range)
            if isinstance(plan, AppendResult):
                return plan
            self._records.extend(plan.result.records)
            self._lines.extend(plan.lines)
            ledger.commit(plan)
            return plan.result

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        """`erase`'s work here: append the erasure record, then replace each taken record's line and
        record by its erased one."""
        with self._lock:
            self._check_open()
            ledger = self._ledger
            found = records_at(self._pairs, request.seqs, lambda pair: pair[0])
            plan = plan_erasure(
                self._name,
                request,
                ((r, line) for r, (_, line) in found),
                ledger.head,
                ids=new_id,
                clock=utc_now,
            )
            journal_id = self._journal_id()
            if not plan.targets:
                return receipt_of(journal_id, (), (), plan.skipped)
            appended = ledger.plan(plan.erasures, ledger.head, self._range)
            assert isinstance(appended, Plan)
            self._records.extend(appended.result.records)
            self._lines.extend(appended.lines)
            ledger.commit(appended)
            erased = []
            for seq, line in plan.erased_lines(appended.result.first_seq):
                record = decode_record(line, where=self._name)
                self._records[seq - 1] = record
                self._lines[seq - 1] = line
                erased.append(record)
            return receipt_of(journal_id, appended.result.records, erased, plan.skipped)

    def finish_erasures(self) -> tuple[int, ...]:
        """Nothing is ever left half done in memory: returns () (the same call as a file journal's)."""
        self._check_open()
        return ()

    def _pairs(self, after: int, count: int) -> list[tuple[Record, bytes]]:
        return list(
            zip(self._records[after : after + count], self._lines[after : after + count], strict=True)
        )

    def _journal_id(self) -> str:
        header = self._records[0].body if self._records else None
        return header.journal if isinstance(header, Header) else self._name

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        check_cursor(self._name, after, limit)
        self._check_open()
        with self._lock:
            return iter(self._range(after, limit))

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        check_cursor(self._name, after, limit)
        self._check_open()
        with self._lock:
            start = max(after, 0)
            stop = len(self._lines) if limit is None else start + max(limit, 0)
            return iter(self._lines[start:stop])

    def flush(self) -> None:
        self._check_open()

    def close(self) -> None:
        self._closed = True

    def __repr__(self) -> str:
        return f"InMemoryJournal({self._name!r}, head={self._ledger.head})"

    def check_invariants(self) -> None:
        """Assert the internal structure is consistent; stress tests call this after every step."""
        with self._lock:
            assert len(self._records) == len(self._lines) == self._ledger.rules.count
            assert list(iter_chain(self._lines, journal=self._name)) == self._records
            assert len({r.id for r in self._records}) == len(self._records)
            ids = self._ledger.rules.ids
            assert len(ids) == len(self._records)
            assert all(ids.node(r.id) == r.body.IS_NODE for r in self._records)
            last = self._records[-1] if self._records else None
            assert self._ledger.head == (Head.of(last) if last else GENESIS)

    def _range(self, after: int, limit: int | None) -> list[Record]:
        start = max(after, 0)
        stop = len(self._records) if limit is None else start + max(limit, 0)
        return self._records[start:stop]

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._name}: the journal is closed; open a new one to continue"
            raise JournalClosedError(msg)
