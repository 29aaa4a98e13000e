"""A page of a database store's journals read together: what `ls` and the viewer's front page list.

Opening each listed journal on its own costs a read transaction or more per journal (its row, its head,
its lines); a page of 100 journals is then hundreds of statements. Here the page's rows and heads are
read in one statement and their lines in a second, in one read transaction, and each journal is then
opened from those rows by the same `DatabaseJournal` code every open runs, over a `HeldEngine` that
serves what was read: the same proof (every line's digest covers its bytes and chains to the one
before, the session rules, the committed head held), the same errors, nothing weaker.

Memory: at most PAGE_RECORDS records are held at a time; a journal longer than that is opened alone, as
any open does.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from waybook.model import GENESIS, Head, JournalError, StorageError
from waybook.stores._catalog import check_journal_id
from waybook.stores._engine import Engine, FeedRow, JournalRow

PAGE_RECORDS: Final = 20_000
"""The most records a page reads in one statement; the page's journals are read in runs within it."""


class HeldEngine:
    """An `Engine` over journals already read (rows, heads and lines), read-only: what a page read for
    each of its journals, served to `DatabaseJournal` as the database would serve it."""

    def __init__(
        self, url: str, journals: Mapping[str, tuple[JournalRow, Head, builtins.list[bytes]]]
    ) -> None:
        self._url = url
        self._journals = dict(journals)

    @property
    def url(self) -> str:
        return self._url

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[HeldTransaction]:
        if write:
            raise _read_only(self._url)
        yield HeldTransaction(self._url, self._journals)

    def committed(self) -> None:
        """Nothing is committed through a held page."""

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        raise _read_only(self._url)

    def close(self) -> None:
        self._journals.clear()


class HeldTransaction:
    """The read statements of `Transaction` over a held page; every write refuses."""

    def __init__(
        self, url: str, journals: Mapping[str, tuple[JournalRow, Head, builtins.list[bytes]]]
    ) -> None:
        self._url = url
        self._journals = journals

    def journal(self, journal_id: str, *, lock: bool = False) -> JournalRow | None:
        held = self._journals.get(journal_id)
        return None if held is None else held[0]

    def head(self, journal_id: str) -> Head:
        held = self._journals.get(journal_id)
        return GENESIS if held is None else held[1]

    def lines(self, journal_id: str, after: int, limit: int) -> builtins.list[bytes]:
        held = self._journals.get(journal_id)
        return [] if held is None else held[2][after : after + limit]

    def page_rows(self, journal_ids: Sequence[str]) -> builtins.list[tuple[JournalRow, Head]]:
        return [self._journals[i][:2] for i in journal_ids if i in self._journals]

    def page_lines(self, heads: Mapping[str, Head]) -> dict[str, builtins.list[bytes]]:
        return {journal_id: self.lines(journal_id, 0, heads[journal_id].seq) for journal_id in heads}

    def allocate(self, count: int) -> int:
        raise _read_only(self._url)

    def insert(self, journal_id: str, rows: Sequence[tuple[int, int, str, bytes]]) -> None:
        raise _read_only(self._url)

    def add_journal(self, row: JournalRow) -> None:
        raise _read_only(self._url)

    def set_hidden(self, journal_id: str) -> None:
        raise _read_only(self._url)

    def set_purged(self, journal_id: str, receipt_seq: int) -> None:
        raise _read_only(self._url)

    def journals(
        self, *, role: str | None, hidden: bool, after: int, limit: int
    ) -> builtins.list[JournalRow]:
        raise _read_only(self._url)

    def count_journals(self, *, hidden: bool) -> int:
        raise _read_only(self._url)

    def created_at_index(self, index: int, *, hidden: bool) -> int | None:
        raise _read_only(self._url)

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        raise _read_only(self._url)

    def feed_head(self) -> int:
        raise _read_only(self._url)

    def replace_lines(self, journal_id: str, rows: Sequence[tuple[int, str, bytes]]) -> None:
        raise _read_only(self._url)

    def note_erasure(self) -> None:
        raise _read_only(self._url)

    def after_commit(self, action: Callable[[], None]) -> None:
        raise _read_only(self._url)


def _read_only(url: str) -> StorageError:
    msg = f"{url}: a page of journals read together is read-only; open a journal with store.open to write"
    return StorageError(msg)


def read_page(
    engine: Engine, journal_ids: Sequence[str], *, budget: int = PAGE_RECORDS
) -> Iterator[tuple[str, HeldEngine | JournalError | None]]:
    """Each of `journal_ids`, in order, with the held engine its journal opens from, its error (an
    invalid id), or None for a journal longer than `budget` records, to open alone.

    The journals are read in runs of at most `budget` records, each run in one read transaction: the
    rows and heads of the journals still to come in one statement, the lines of the run's journals in
    another (so a page that fits is two statements). An id that is not a journal (never created, or
    purged) is held as absent: opening it raises what an open raises. A run is read once the one
    before it has been handed out: this function holds at most one run."""
    checked: list[tuple[str, JournalError | None]] = []
    for journal_id in journal_ids:
        try:
            checked.append((check_journal_id(journal_id), None))
        except JournalError as exc:
            checked.append((journal_id, exc))
    held: dict[str, HeldEngine | None] = {}
    for index, (journal_id, error) in enumerate(checked):
        if error is not None:
            yield journal_id, error
            continue
        if journal_id not in held:
            rest = dict.fromkeys(later for later, problem in checked[index:] if problem is None)
            held = _read_run(engine, list(rest), budget)
        yield journal_id, held[journal_id]


def _read_run(engine: Engine, journal_ids: list[str], budget: int) -> dict[str, HeldEngine | None]:
    """The first journals of `journal_ids` whose records fit in `budget` (the first always: alone when
    it is longer, as None), read in one read transaction."""
    held: dict[str, HeldEngine | None] = {}
    run: dict[str, tuple[JournalRow, Head]] = {}
    size = 0
    with engine.transaction(write=False) as tx:
        rows = {row.journal_id: (row, head) for row, head in tx.page_rows(journal_ids)}
        for journal_id in journal_ids:
            found = rows.get(journal_id)
            if found is None:
                held[journal_id] = HeldEngine(engine.url, {})  # opening it raises UnknownJournalError
            elif found[0].purged is not None:  # opening it raises JournalPurgedError
                held[journal_id] = HeldEngine(engine.url, {journal_id: (found[0], GENESIS, [])})
            elif found[1].seq > budget:
                held[journal_id] = None
            elif size + found[1].seq <= budget:
                run[journal_id] = found
                size += found[1].seq
            else:
                break
        lines = tx.page_lines({journal_id: head for journal_id, (_, head) in run.items()}) if run else {}
    page = HeldEngine(engine.url, {i: (row, head, lines[i]) for i, (row, head) in run.items()})
    return held | dict.fromkeys(run, page)
