"""`FedJournal`: a store's journal, telling the store's feed of every commit it makes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from waybook.journal import (
    Damage,
    DamageReporting,
    ErasingJournal,
    ErasureReceipt,
    ErasureRequest,
    PositionedJournal,
    SelfChecking,
)
from waybook.model import AppendResult, Head, InvalidArgumentError, NewRecord
from waybook.stores._header_id import check_first_header
from waybook.stores._passing import PassingJournal


class FedJournal(PassingJournal[PositionedJournal], ErasingJournal):
    """Wraps the adapter's journal; after each append, `on_commit(journal_id, new head)` feeds it.

    If the process dies between the two, the records are committed but not yet fed; the next commit
    or open of the journal feeds them (see runs.py), so the feed never loses a record for good.
    """

    def __init__(
        self,
        journal_id: str,
        inner: PositionedJournal,
        on_commit: Callable[[str, Head], None],
        *,
        store: str,
    ) -> None:
        super().__init__(inner)
        self.journal_id = journal_id
        self._on_commit = on_commit
        self._store = store

    @property
    def inner(self) -> PositionedJournal:
        return self._journal

    @property
    def damage(self) -> Damage | None:
        """The adapter's damage report (a JSONL journal's torn tail); None for one that has none."""
        inner = self._journal
        return inner.damage if isinstance(inner, DamageReporting) else None

    def position(self) -> tuple[Head, str | None]:
        return self._journal.position()

    def check_invariants(self) -> None:
        """The adapter's own invariant check, where it has one."""
        inner = self._journal
        if isinstance(inner, SelfChecking):
            inner.check_invariants()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        check_first_header(self._store, self.journal_id, records, expected)  # a header names its journal
        result = self._journal.append(records, expected=expected)
        self._on_commit(self.journal_id, result.head)
        return result

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        """The adapter's erase (docs/erasure.md), then the erasure records fed like any commit."""
        inner = self._journal
        if not isinstance(inner, ErasingJournal):
            msg = f"{self.name}: this store's journals cannot erase ({type(inner).__name__} does not)"
            raise InvalidArgumentError(msg)
        receipt = inner.erase_checked(request)
        if receipt.erasures:
            self._on_commit(self.journal_id, self._journal.head())  # the last erasure record is the head
        return receipt

    def finish_erasures(self) -> tuple[int, ...]:
        """The adapter's `finish_erasures`: what an interrupted erasure left, finished."""
        finish = getattr(self._journal, "finish_erasures", None)
        return finish() if callable(finish) else ()

    def __repr__(self) -> str:
        return f"FedJournal({self.journal_id!r}, {self._journal!r})"
