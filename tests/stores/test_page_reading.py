"""A page of journals read together (issue 50, big stores): `open_journals` and `open_proven_journals`
give each journal of a listing's page exactly as `open_journal` and `open_proven` give it (the same
records, the same reports, the same errors for damage), on every store; a database store reads the
page in one read transaction of two statements, however many journals it lists, holds at most a
budget of records at a time, and stays right while writers append to the listed journals."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import store_damage
from tests.helpers.builders import chat
from tests.stores.conftest import STORES, StoreKind
from waybook.journal import SessionJournal
from waybook.model import JournalError
from waybook.stores import (
    DatabaseStore,
    JournalStore,
    PageReadingStore,
    open_journal,
    open_journals,
    open_proven,
    open_proven_journals,
    open_store,
)
from waybook.stores._engine import Engine, Transaction
from waybook.stores._page import HeldEngine, read_page

PERSISTENT = [kind for kind in STORES if kind.persistent]
DATABASES = [kind for kind in STORES if kind.name in {"sqlite", "postgresql"}]


def talk(journal: SessionJournal, *, nodes: int, prefix: str, after: str | None = None) -> str:
    """Append `nodes` alternating messages as one batch, the first a child of `after`: the new leaf."""
    journal.append(list(chat(nodes, start_parent=after, prefix=prefix)), expected=journal.head())
    return f"{prefix}{nodes - 1}"


def fill(store: JournalStore, journals: int, *, turns: int = 3) -> list[str]:
    """Journals j000... of a header and `turns` questions and answers each."""
    ids = []
    for n in range(journals):
        journal_id = f"j{n:03d}"
        with store.create(journal_id) as journal:
            talk(journal, nodes=2 * turns, prefix="m")
        ids.append(journal_id)
    return ids


def seen(opened: object) -> object:
    """What a reader sees of one opened journal (its records and lines), or its error's type and text."""
    if isinstance(opened, JournalError):
        return (type(opened).__name__, str(opened))
    journal: SessionJournal = opened  # type: ignore[assignment]
    with journal:
        return [[record.digest for record in journal.read()], list(journal.read_lines())]


def one_by_one(store: JournalStore, journal_id: str) -> object:
    try:
        journal = open_journal(store, journal_id)
    except JournalError as exc:
        return seen(exc)
    return seen(journal)


def proven_one(store: JournalStore, journal_id: str) -> object:
    try:
        journal, report = open_proven(store, journal_id)
    except JournalError as exc:
        return seen(exc)
    with journal:
        return report, [record.digest for record in journal.read(limit=report.head.seq)]


def proven_seen(proven: object) -> object:
    if isinstance(proven, JournalError):
        return seen(proven)
    journal, report = proven  # type: ignore[misc]
    with journal:
        return report, [record.digest for record in journal.read(limit=report.head.seq)]


@pytest.fixture(params=PERSISTENT, ids=lambda k: k.name)
def persistent(request: pytest.FixtureRequest) -> StoreKind:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=DATABASES, ids=lambda k: k.name)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return request.param.url(tmp_path)  # type: ignore[no-any-return]


def test_a_page_opens_each_journal_as_its_own_open_does_damage_and_mistakes_included(
    persistent: StoreKind, tmp_path: Path
) -> None:
    url = persistent.url(tmp_path)
    with open_store(url) as store:
        ids = fill(store, 7)
        store.purge("j001", reason="test")
        store.hide("j002", reason="test")
    store_damage.lose_tail(url, "j003", keep=2)  # lost records
    store_damage.alter_record(url, "j004", 3)  # corruption inside the chain
    page = ["j000", "nobody", "j001", "j002", "j003", "j004", "bad/id", "j005", "j000", "j006"]
    with open_store(url, create=False) as store:
        expected = [one_by_one(store, journal_id) for journal_id in page]
        together = [(journal_id, seen(opened)) for journal_id, opened in open_journals(store, page)]
        assert together == list(zip(page, expected, strict=True))
        opened = [
            journal_id for journal_id, found in zip(page, expected, strict=True) if isinstance(found, list)
        ]
        assert opened == ["j000", "j002", "j005", "j000", "j006"]
        assert ids[:7] == [f"j{n:03d}" for n in range(7)]


def test_a_proven_page_reports_each_journal_as_open_proven_does(
    persistent: StoreKind, tmp_path: Path
) -> None:
    url = persistent.url(tmp_path)
    with open_store(url) as store:
        fill(store, 6)
        store.purge("j001", reason="test")
    store_damage.lose_tail(url, "j003", keep=2)
    store_damage.alter_record(url, "j004", 3)
    page = ["j000", "j001", "nobody", "j003", "j004", "j005", "bad/id"]
    with open_store(url, create=False) as store:
        expected = [proven_one(store, journal_id) for journal_id in page]
        together = [(journal_id, proven_seen(p)) for journal_id, p in open_proven_journals(store, page)]
        assert together == list(zip(page, expected, strict=True))
        reports = [
            found[0] for found in expected if isinstance(found, tuple) and not isinstance(found[0], str)
        ]
        assert [report.ok for report in reports] == [True, False, False, True]


class CountingEngine:
    """An engine that counts the read transactions and statements run through it (nothing mocked: every
    call goes to the real engine)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.transactions = 0
        self.statements = 0

    @property
    def url(self) -> str:
        return self.engine.url

    def transaction(self, *, write: bool) -> AbstractContextManager[Transaction]:
        self.transactions += 1
        return _Counted(self, self.engine.transaction(write=write))

    def committed(self) -> None:
        self.engine.committed()

    def wait(self, after: int, timeout: float | None, head: Any) -> bool:
        return self.engine.wait(after, timeout, head)

    def close(self) -> None:
        self.engine.close()


class _Counted:
    def __init__(self, counter: CountingEngine, inner: AbstractContextManager[Transaction]) -> None:
        self._counter = counter
        self._inner = inner

    def __enter__(self) -> Any:
        tx = self._inner.__enter__()
        counter = self._counter

        class Proxy:
            def __getattr__(self, name: str) -> Any:
                found = getattr(tx, name)
                if not callable(found):
                    return found

                def call(*args: Any, **kwargs: Any) -> Any:
                    counter.statements += 1
                    return found(*args, **kwargs)

                return call

        return Proxy()

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)


@pytest.fixture
def counted(database: str) -> Iterator[tuple[DatabaseStore, CountingEngine]]:
    with open_store(database) as store:
        assert isinstance(store, DatabaseStore)
        fill(store, 40, turns=2)
        engine = CountingEngine(store.engine)
        yield DatabaseStore(engine), engine


@pytest.mark.parametrize("listed", [3, 40])
def test_a_database_store_reads_a_page_in_one_transaction_of_two_statements_however_long_it_is(
    counted: tuple[DatabaseStore, CountingEngine], listed: int
) -> None:
    store, engine = counted
    assert isinstance(store, PageReadingStore)
    ids = [f"j{n:03d}" for n in range(listed)]
    for opener in (open_journals, open_proven_journals):
        engine.transactions = engine.statements = 0
        for _, opened in opener(store, ids):
            journal = opened if not isinstance(opened, tuple) else opened[0]
            assert not isinstance(journal, JournalError)
            with journal:
                list(journal.read())
        assert (engine.transactions, engine.statements) == (1, 2), opener.__name__


def test_a_store_without_the_ability_opens_its_page_one_journal_at_a_time(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path}/store") as store:
        assert not isinstance(store, PageReadingStore)
        ids = fill(store, 3)
        assert [journal_id for journal_id, _ in open_journals(store, ids)] == ids


def test_a_page_holds_at_most_its_budget_of_records_and_a_longer_journal_opens_alone(database: str) -> None:
    with open_store(database) as store:
        assert isinstance(store, DatabaseStore)
        ids = fill(store, 6, turns=2)  # 5 records each
        with store.create("long") as journal:
            talk(journal, nodes=20, prefix="m")
        page = [*ids[:3], "long", *ids[3:]]
        engine = CountingEngine(store.engine)
        held = list(read_page(engine, page, budget=12))
        assert [journal_id for journal_id, _ in held] == page
        assert dict(held)["long"] is None  # 21 records: opened alone, as `open` opens it
        runs = {id(h) for _, h in held if isinstance(h, HeldEngine)}
        assert len(runs) == 3  # 5 + 5 records a run (a third journal would pass 12)
        assert engine.transactions == 3
        expected = [one_by_one(store, journal_id) for journal_id in page]
        assert [seen(opened) for _, opened in open_journals(store, page)] == expected


def test_a_page_read_while_writers_append_to_its_journals_never_sees_a_broken_chain(database: str) -> None:
    with open_store(database) as store:
        ids = fill(store, 8, turns=1)
        stop = threading.Event()
        appended = threading.Semaphore(0)
        failures: list[BaseException] = []

        def writer() -> None:
            try:
                with open_store(database, create=False) as own:
                    journals = [own.open(journal_id) for journal_id in ids]
                    leaves = ["m1"] * len(ids)
                    turn = 0
                    while not stop.is_set():
                        for n, journal in enumerate(journals):
                            leaves[n] = talk(journal, nodes=2, prefix=f"w{turn}-", after=leaves[n])
                            appended.release()
                        turn += 1
            except BaseException as exc:
                failures.append(exc)
                appended.release()

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            for _ in range(12):
                assert appended.acquire(timeout=60)  # at least one append between two pages
                for opener in (open_journals, open_proven_journals):
                    for journal_id, opened in opener(store, ids):
                        if isinstance(opened, tuple):
                            journal, report = opened
                            assert report.ok, report
                        else:
                            assert not isinstance(opened, JournalError), (journal_id, opened)
                            journal = opened
                        with journal:
                            assert len(list(journal.read())) == journal.head().seq
        finally:
            stop.set()
            thread.join(timeout=60)
        assert not failures
