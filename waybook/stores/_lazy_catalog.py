"""`LazyCatalog`: the directory store's catalog journal, opened only when something needs more than its head.

A directory store that opened from its index (`_store_index.py`) knows the catalog's last record: the index
named it, and the open read its line and checked its digest. Opening the catalog's `JsonlJournal` would
prove the file from its checkpoint and load its checkpoint's index of every record id (O(journals)); a
listing, or opening one journal, needs none of that while the file ends where the index said. So the
head, and reads from the last record on, are answered from that line while the file's size is the one
the index named; anything else (a read of earlier records, an append, a file another process extended)
opens the journal, proving it as every default open does, and is served by it from then on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from waybook.journal import ClosedOnExit, Damage, JsonlJournal
from waybook.model import AppendResult, Head, JournalClosedError, NewRecord, Record
from waybook.stores._catalog import leaf_of


class LazyCatalog(ClosedOnExit):
    """The catalog journal at `path`, whose record `last` (stored as `line`) ends at byte `end`; `opener`
    opens the journal itself when first needed."""

    def __init__(
        self, path: Path, *, last: Record, line: bytes, end: int, opener: Callable[[], JsonlJournal]
    ) -> None:
        self._path = path
        self._last = last
        self._line = line
        self._end = end
        self._opener = opener
        self._journal: JsonlJournal | None = None
        self._closed = False
        self._mutex = threading.Lock()

    @property
    def opened(self) -> bool:
        """Whether the journal itself was opened (the store's tests look)."""
        return self._journal is not None

    def _unchanged(self) -> bool:
        """Whether the file still ends where the index said (so it holds nothing after `last`)."""
        if self._journal is not None or self._closed:
            return False
        try:
            return os.stat(self._path).st_size == self._end
        except OSError:
            return False

    def _opened(self) -> JsonlJournal:
        with self._mutex:
            if self._closed:
                msg = f"{self._path}: the store's catalog is closed; open the store again"
                raise JournalClosedError(msg)
            if self._journal is None:
                self._journal = self._opener()
            return self._journal

    @property
    def name(self) -> str:
        return str(self._path)

    @property
    def damage(self) -> Damage | None:
        journal = self._journal
        return None if journal is None else journal.damage

    def head(self) -> Head:
        if self._unchanged():
            return Head.of(self._last)
        return self._opened().head()

    def position(self) -> tuple[Head, str | None]:
        if self._unchanged():
            return Head.of(self._last), leaf_of(self._last)
        return self._opened().position()

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        seq = self._last.seq
        if after >= seq - 1 and self._unchanged():
            return iter([self._last] if after == seq - 1 and limit != 0 else [])
        return self._opened().read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        seq = self._last.seq
        if after >= seq - 1 and self._unchanged():
            return iter([self._line] if after == seq - 1 and limit != 0 else [])
        return self._opened().read_lines(after, limit)

    def read_proved(self, after: int = 0, limit: int | None = None) -> Iterator[tuple[Record, bytes]]:
        return self._opened().read_proved(after, limit)

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        return self._opened().append(records, expected=expected)

    def check_invariants(self) -> None:
        if self._journal is not None:
            self._journal.check_invariants()

    def flush(self) -> None:
        if self._journal is not None:
            self._journal.flush()

    def close(self) -> None:
        with self._mutex:
            journal, self._journal, self._closed = self._journal, None, True
        if journal is not None:
            journal.close()

    def __repr__(self) -> str:
        return f"LazyCatalog({str(self._path)!r})"
