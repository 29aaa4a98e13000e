"""The `SessionJournal` protocol that every adapter satisfies structurally, and the optional abilities
some adapters add (typed, runtime-checkable: `isinstance(journal, PositionedJournal)`), with the values
they report (`Damage`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

import attrs

from waybook.model import AppendResult, Head, NewRecord, Record


@runtime_checkable
class SessionJournal(Protocol):
    """An append-only, digest-chained sequence of records. See docs/journal-contract.md.

    `name` identifies the journal in messages and receipts (a path or an in-memory label; never a
    credential).
    """

    @property
    def name(self) -> str: ...

    def head(self) -> Head:
        """The last committed record's position; GENESIS when empty."""
        ...

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        """Commit `records` atomically after `expected`, or raise StaleWriterError having written nothing.

        Resending a batch that already committed right after `expected` returns the original result.
        """
        ...

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        """Committed records with seq > `after`, in commit order, at most `limit` of them."""
        ...

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """The committed canonical bytes of the same records, without newlines, exactly as stored."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


# --- optional abilities: an adapter has them or not; callers check with isinstance -----------------


@runtime_checkable
class PositionedJournal(SessionJournal, Protocol):
    """A journal that knows its leaf as well as its head, so a writer can start without a replay."""

    def position(self) -> tuple[Head, str | None]:
        """The head and the leaf after it (the parent of the next node), read together."""
        ...


@attrs.frozen
class Damage:
    """The first bad bytes a journal's storage holds (a JSONL file's torn tail, or corruption it was
    opened past): where they start, the first seq they leave uncommitted, and why."""

    torn: bool
    offset: int
    seq: int
    """The first seq not committed (where the damaged record's batch starts)."""
    reason: str
    bad_bytes: int
    bad_record: int | None = None
    """The seq of the record whose bytes or rules are bad, when it is not `seq` (a later record of a
    multi-record batch: the batch is uncommitted from `seq`, but the damage is here)."""


@runtime_checkable
class DamageReporting(Protocol):
    """A journal whose storage can hold damage it opened past (a JSONL file's torn tail)."""

    @property
    def damage(self) -> Damage | None:
        """The first bad bytes found on open or since (None: none)."""
        ...


@runtime_checkable
class SelfChecking(Protocol):
    """A journal (or index) that can assert its internal invariants: stress and conformance tests call
    it after each step."""

    def check_invariants(self) -> None: ...
