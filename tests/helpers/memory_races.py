"""Deterministic races for memory writers: a journal double that lets another writer in before any call.

`Interleaved(inner)` passes every journal call through to the real journal `inner`; before the call
numbered `at` (counting from 0: head, read, read_lines and append alike) it runs `competitor` once, so
a test can put a competing write at every step between a writer's read and its append. A first run with
no competitor counts the calls (`calls`), and the test then injects at each of them in turn. The double
is of the journal only: the code under test runs unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tests.helpers.builders import AT
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.model import Head, MemoryWrite, NewRecord
from waybook.model._records import ReflectionReserved


class Interleaved:
    """A journal that runs `competitor` before its call number `at` (None: never), once."""

    def __init__(self, inner: InMemoryJournal, *, at: int | None = None) -> None:
        self.inner = inner
        self.at = at
        self.calls = 0
        self.competitor: Callable[[], None] | None = None
        self.ran_at: int | None = None
        self.log: list[str] = []
        """The name of every call, in order (head, read, read_lines, append)."""

    def _step(self, name: str) -> None:
        self.log.append(name)
        index, self.calls = self.calls, self.calls + 1
        if self.competitor is not None and index == self.at and self.ran_at is None:
            self.ran_at = index
            self.competitor()

    @property
    def name(self) -> str:
        return self.inner.name

    def head(self) -> Head:
        self._step("head")
        return self.inner.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> Any:
        self._step("append")
        return self.inner.append(records, expected=expected)

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Any]:
        self._step("read")
        return self.inner.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self._step("read_lines")
        return self.inner.read_lines(after, limit)

    def flush(self) -> None: ...
    def close(self) -> None: ...


def raw_write(journal: InMemoryJournal, path: str, text: str, *, request: str | None = None) -> None:
    """Another writer's note write, straight into the journal (not through the code under test)."""
    state_head = journal.head()
    body = MemoryWrite(path=path, text=text, digest=content_digest(text), command="other", call_id=request)
    journal.append([NewRecord(id=f"other-{state_head.seq}", at=AT, body=body)], expected=state_head)


def raw_reservation(journal: InMemoryJournal, run: str) -> None:
    """Another writer's reflection bookkeeping record (a manual reservation), straight into the journal."""
    body = ReflectionReserved(run=run, trigger="manual", reason="other process")
    journal.append([NewRecord(id=f"other-{run}", at=AT, body=body)], expected=journal.head())
