"""What every part of the journal contract kit stands on: the factory hooks and the `journal` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from waybook.journal import SessionJournal
from waybook.model import GENESIS, Head, NewRecord
from waybook.testing._records import chat, header


class JournalFactory:
    """The hooks a subclass fills in. Only `make_journal` is required."""

    journal_id: ClassVar[str] = "test"
    """The journal the contract's headers name. A store refuses a header naming another journal than the
    one it is appended to (HeaderMismatchError): a store's contract (`StoreJournalContract`) runs on the
    journal of this id."""

    def header(self, record_id: str = "h") -> NewRecord:
        """A header record naming `journal_id`, as every header the contract writes."""
        return header(record_id, journal=self.journal_id)

    def started(self, journal: SessionJournal, n: int = 0) -> Head:
        """Write a header and n chat nodes; return the head."""
        head = journal.append([self.header()], expected=GENESIS).head
        if n:
            head = journal.append(list(chat(n)), expected=head).head
        return head

    def make_journal(self, directory: Path) -> SessionJournal:
        """A fresh, empty journal (no header: the contract writes its own). `directory` is empty and
        belongs to this journal alone; an adapter that keeps nothing on disk ignores it."""
        msg = f"{type(self).__name__} must define make_journal(directory)"
        raise NotImplementedError(msg)

    def reopen_journal(self, journal: SessionJournal) -> SessionJournal:
        """Close `journal` and open what it wrote again. Define it where the adapter persists: the
        state machine then reopens the journal between steps and checks that nothing was lost."""
        msg = f"{type(self).__name__} does not reopen journals"
        raise NotImplementedError(msg)

    def close_journal(self, journal: SessionJournal) -> None:
        """Release `journal` (and whatever was opened for it) at the end of a test."""
        journal.close()

    def persists(self) -> bool:
        """Whether this adapter reopens journals (whether the subclass defined `reopen_journal`)."""
        return type(self).reopen_journal is not JournalFactory.reopen_journal

    @pytest.fixture
    def journal(self, tmp_path: Path) -> Iterator[SessionJournal]:
        """The journal under test, made fresh for each test and closed after it."""
        journal = self.make_journal(tmp_path)
        try:
            yield journal
        finally:
            self.close_journal(journal)


def stored(journal: SessionJournal) -> list[bytes]:
    return list(journal.read_lines())


class LinesJournal:
    """A read-only journal over given lines, to hand verify() damaged bytes."""

    name = "damaged"

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return iter(self._lines[after : None if limit is None else after + limit])
