"""`PostgresJournal`: one journal of a PostgreSQL store, satisfying `SessionJournal`.

The journal keeps a `Ledger` (the head it knows and the session rules) so that it can plan an append
(check the rules, seal the records) without a round trip; the server decides. `waybook_append` moves the
head row only if it is still the head the plan was made against, and inserts the records in the same
transaction (see schema.py). When it is not, the journal reads the records other writers committed,
proves them, and plans again: either the batch is a retry of one that already committed (a lost reply:
the original result is returned) or the writer is stale (`StaleWriterError`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Self

from waybook.journal.errors import JournalClosedError, StaleWriterError
from waybook.journal.head import AppendResult, Head
from waybook.journal.ledger import Ledger
from waybook.journal.records import NewRecord, Record
from waybook.stores.postgres import queries as q
from waybook.stores.postgres.database import Connection, Database
from waybook.stores.postgres.errors import JournalMissingError


class PostgresJournal:
    """A journal stored in PostgreSQL. Thread-safe; appends on one object run one at a time.

    Cost: append is one round trip (plus one to catch up when another writer moved the head), head is
    one round trip, read is one round trip per 2,048 records, each record proved on read.
    """

    def __init__(self, db: Database, journal_id: str, *, name: str | None = None) -> None:
        self._db = db
        self._id = journal_id
        self._name = name or f"{db.label}#{journal_id}"
        self._ledger = Ledger.empty(self._name)
        self._lock = threading.Lock()
        self._closed = False
        with self._lock:
            db.run("open", self._catch_up)

    @property
    def name(self) -> str:
        return self._name

    @property
    def journal_id(self) -> str:
        return self._id

    def head(self) -> Head:
        self._check_open()
        row = self._db.run("head", lambda conn: conn.execute(q.HEAD, (self._id,)).fetchone())
        if row is None:
            raise JournalMissingError(journal=self._name)
        return Head(int(row[0]), str(row[1]))  # type: ignore[call-overload]

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        with self._lock:
            self._check_open()
            return self._db.run("append", lambda conn: self._append(conn, records, expected))

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        self._check_open()
        return self._pages(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        # Records are proved on the way out; the bytes returned are the stored bytes, not re-encoded.
        self._check_open()
        return (line for records in self._page_lines(after, limit) for line in records)

    def flush(self) -> None:
        self._check_open()  # a returned append is committed by the server; there is nothing to flush

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresJournal({self._name!r}, head={self._ledger.head})"

    # --- appending ---------------------------------------------------------------------------------

    def _append(self, conn: Connection, records: Sequence[NewRecord], expected: Head) -> AppendResult:
        if expected != self._ledger.head:
            self._catch_up(conn)  # another writer moved on, or this is a retry of a committed batch
        plan = self._ledger.plan(records, expected, lambda after, limit: self._range(conn, after, limit))
        if isinstance(plan, AppendResult):
            return plan
        row = conn.execute(q.APPEND, q.append_params(self._id, plan), prepare=True).fetchone()
        outcome = q.append_outcome(row)
        if outcome.committed:
            self._ledger.commit(plan)
            return plan.result
        if outcome.head is None:
            raise JournalMissingError(journal=self._name)
        self._catch_up(conn)
        again = self._ledger.plan(records, expected, lambda after, limit: self._range(conn, after, limit))
        if isinstance(again, AppendResult):
            return again
        raise StaleWriterError(journal=self._name, expected=expected, actual=outcome.head)

    def _catch_up(self, conn: Connection) -> None:
        """Prove and take in every record committed after the ledger's head."""
        rows = conn.execute(q.TAIL, (self._id, self._ledger.head.seq), binary=True).fetchall()
        if not rows and self._ledger.head.seq == 0:
            if conn.execute(q.HEAD, (self._id,)).fetchone() is None:
                raise JournalMissingError(journal=self._name)
            return
        self._ledger.advance(q.prove_rows(rows, self._ledger.head, self._name))  # type: ignore[arg-type]

    def _range(self, conn: Connection, after: int, limit: int) -> list[Record]:
        return self._fetch(conn, after, limit)

    # --- reading -----------------------------------------------------------------------------------

    def _fetch(self, conn: Connection, after: int, limit: int) -> list[Record]:
        start, anchored = q.page_start(after)
        rows = conn.execute(q.ROWS, (self._id, start, limit + anchored), binary=True).fetchall()
        head, rest = q.split_anchor(rows, after, anchored, self._name)  # type: ignore[arg-type]
        return q.prove_rows(rest, head, self._name)

    def _pages(self, after: int, limit: int | None) -> Iterator[Record]:
        for records, _ in self._proved_pages(after, limit):
            yield from records

    def _page_lines(self, after: int, limit: int | None) -> Iterator[list[bytes]]:
        for _, lines in self._proved_pages(after, limit):
            yield lines

    def _proved_pages(self, after: int, limit: int | None) -> Iterator[tuple[list[Record], list[bytes]]]:
        after = max(after, 0)
        remaining = None if limit is None else max(limit, 0)
        while remaining is None or remaining > 0:
            size = q.PAGE if remaining is None else min(q.PAGE, remaining)
            page = self._db.run("read", lambda conn, a=after, s=size: self._fetch_lines(conn, a, s))
            if not page[0]:
                return
            yield page
            after = page[0][-1].seq
            if remaining is not None:
                remaining -= len(page[0])
            if len(page[0]) < size:
                return

    def _fetch_lines(self, conn: Connection, after: int, limit: int) -> tuple[list[Record], list[bytes]]:
        start, anchored = q.page_start(after)
        rows = conn.execute(q.ROWS, (self._id, start, limit + anchored), binary=True).fetchall()
        head, rest = q.split_anchor(rows, after, anchored, self._name)  # type: ignore[arg-type]
        return q.prove_rows(rest, head, self._name), [bytes(r[2]) for r in rest]

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._name}: the journal is closed; open it again from its store to continue"
            raise JournalClosedError(msg)
