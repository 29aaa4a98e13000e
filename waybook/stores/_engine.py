"""What a database engine supplies to be a waybook store: one transaction of a dozen statements.

`Transaction` and `Engine` are the whole contract between the engine-neutral database store
(database.py, database_journal.py) and an engine (sqlite.py; PostgreSQL). Tables an engine keeps (names
and types are the engine's own):
    journals(journal_id PK, role, metadata JSON, created, created_at, hidden, purged, head)
        a projection of the catalog journal, kept in the same transactions, for listing by SQL; and
        each journal's committed head, moved by the transaction that inserts its records, so a record
        deleted behind the store's back is found missing (LostRecordsError), never a shorter journal
    records(journal_id, seq, position UNIQUE, digest, line; unique (journal_id, seq))
    whatever the engine needs so that a feed position is never reused, even after a purge
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol

from waybook.model import Head
from waybook.stores._values import JournalInfo

PAGE = 1024
"""Rows fetched per read transaction when streaming a journal or the feed."""


class JournalRow(NamedTuple):
    """A journal's row in the `journals` table."""

    journal_id: str
    role: str
    metadata: dict[str, Any]
    created: int
    created_at: str
    hidden: bool
    purged: int | None
    """The catalog seq of its purge receipt, or None."""

    def info(self) -> JournalInfo:
        return JournalInfo(
            journal_id=self.journal_id,
            role=self.role,
            metadata=self.metadata,
            created=self.created,
            created_at=self.created_at,
            hidden=self.hidden,
        )


class FeedRow(NamedTuple):
    position: int
    journal_id: str
    seq: int
    line: bytes


class Transaction(Protocol):
    """The statements an engine runs inside one transaction. Writes happen only in write transactions,
    which the engine serialises at least per journal (SQLite: BEGIN IMMEDIATE)."""

    def journal(self, journal_id: str, *, lock: bool = False) -> JournalRow | None:
        """The journal's row (None if it never existed). `lock`: hold it until the transaction ends, so
        that the head read next is the one the insert follows (PostgreSQL: SELECT ... FOR UPDATE)."""
        ...

    def head(self, journal_id: str) -> Head:
        """(seq, digest) of the journal's last committed record, as its row keeps it (not as its records
        say: rows deleted behind the store's back do not move it); GENESIS when it has none."""
        ...

    def lines(self, journal_id: str, after: int, limit: int) -> builtins.list[bytes]:
        """The stored lines of records seq > `after`, in seq order, at most `limit`."""
        ...

    def page_rows(self, journal_ids: Sequence[str]) -> builtins.list[tuple[JournalRow, Head]]:
        """The rows and committed heads of those of `journal_ids` that exist, in one statement (a page of
        journals read together: waybook.stores._page)."""
        ...

    def page_lines(self, heads: Mapping[str, Head]) -> dict[str, builtins.list[bytes]]:
        """The stored lines of each journal in `heads`, in seq order, in one statement; where the
        engine's statements each see their own snapshot (PostgreSQL), none past the head given."""
        ...

    def allocate(self, count: int) -> int:
        """Reserve `count` feed positions; returns the first. Committed with the transaction, so
        positions are handed out in commit order and never reused."""
        ...

    def insert(self, journal_id: str, rows: Sequence[tuple[int, int, str, bytes]]) -> None:
        """Insert records `(seq, position, digest, line)` and move the journal's head to the last."""
        ...

    def add_journal(self, row: JournalRow) -> None: ...

    def set_hidden(self, journal_id: str) -> None: ...

    def set_purged(self, journal_id: str, receipt_seq: int) -> None:
        """Mark the journal purged and delete every record of it."""
        ...

    def journals(
        self, *, role: str | None, hidden: bool, after: int, limit: int
    ) -> builtins.list[JournalRow]:
        """Unpurged journals created after `after`, in creation order, at most `limit`."""
        ...

    def count_journals(self, *, hidden: bool) -> int:
        """How many unpurged journals there are (hidden ones only with `hidden`), the catalog aside."""
        ...

    def created_at_index(self, index: int, *, hidden: bool) -> int | None:
        """The creation seq of the `index`-th (from 0) journal `journals` lists, None past the last."""
        ...

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        """Records with position > `after` in position order, at most `limit`."""
        ...

    def feed_head(self) -> int:
        """The last position handed out and committed (0 when none)."""
        ...

    def replace_lines(self, journal_id: str, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Replace the stored lines of records `(seq, digest, line)` whose digest stays the same (an
        erasure overwrites their content: docs/erasure.md)."""
        ...

    def note_erasure(self) -> None:
        """Remember, in this transaction, that erased bytes may linger in the engine's log until it is
        scrubbed (`Engine.scrub`); an engine with nothing to scrub does nothing."""
        ...

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run `action` once the transaction has committed (never if it rolls back)."""
        ...


class Engine(Protocol):
    """A database holding one store."""

    @property
    def url(self) -> str: ...

    def transaction(self, *, write: bool) -> AbstractContextManager[Transaction]:
        """A transaction, committed when the block ends normally and rolled back otherwise. Errors the
        engine cannot avoid (busy, I/O) surface as StorageError subclasses (StoreBusyError)."""
        ...

    def committed(self) -> None:
        """Called after this process commits records, to wake its waiting feed readers."""
        ...

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Block until `head()` > `after` or `timeout` passes; the engine decides how to sleep."""
        ...

    def close(self) -> None: ...
