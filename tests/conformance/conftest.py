"""Adapter factories: every adapter passes the same conformance suite unchanged.

To add an adapter, add a factory here: a callable taking a pytest tmp_path and returning a fresh, empty
journal, plus a reopen callable (None where the adapter does not persist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from tests.pg_fixtures import pg_store_url
from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal
from waybook.stores import JournalStore, open_store
from waybook.stores._fed import FedJournal


@attrs.frozen
class Adapter:
    name: str
    make: Callable[[Path], SessionJournal]
    reopen: Callable[[SessionJournal], SessionJournal] | None = None


def _reopen_jsonl(journal: SessionJournal) -> SessionJournal:
    assert isinstance(journal, JsonlJournal)
    journal.close()
    return JsonlJournal(journal.path, create=False)


class StoreJournal(FedJournal):
    """A journal of a store the suite opened for it: closing the journal closes the store too."""

    def __init__(self, url: str, store: JournalStore, journal: SessionJournal) -> None:
        super().__init__("conformance", journal, lambda _id, _seq: None)
        self.url = url
        self.store = store

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.store.close()


def store_journal(url_of: Callable[[Path], str]) -> Callable[[Path], SessionJournal]:
    """A factory for an empty journal (`header=False`: the suite writes its own header) in a store."""

    def make(tmp: Path) -> SessionJournal:
        url = url_of(tmp)
        store = open_store(url)
        return StoreJournal(url, store, store.create("conformance", header=False))

    return make


def reopen_from_store(journal: SessionJournal) -> SessionJournal:
    """Close the journal and its store, then open both again from the URL."""
    assert isinstance(journal, StoreJournal)
    journal.close()
    store = open_store(journal.url)
    return StoreJournal(journal.url, store, store.open("conformance"))


ADAPTERS: list[Adapter] = [
    Adapter("in_memory", lambda _tmp: InMemoryJournal("conformance")),
    Adapter("jsonl", lambda tmp: JsonlJournal(tmp / "journal.jsonl"), _reopen_jsonl),
    Adapter(
        "jsonl_group",
        lambda tmp: JsonlJournal(tmp / "journal.jsonl", durability="group"),
        _reopen_jsonl,
    ),
    Adapter("memory_store", store_journal(lambda _tmp: "memory:")),
    Adapter("directory_store", store_journal(lambda tmp: f"file:{tmp}/store"), reopen_from_store),
    Adapter("sqlite_store", store_journal(lambda tmp: f"sqlite:{tmp}/store.db"), reopen_from_store),
    Adapter("postgresql_store", store_journal(lambda _tmp: pg_store_url()), reopen_from_store),
]


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.name)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def journal(adapter: Adapter, tmp_path: Path) -> Iterator[SessionJournal]:
    with adapter.make(tmp_path) as j:
        yield j
