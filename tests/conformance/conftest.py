"""The adapters and stores the journal contract kit (`waybook.testing.JournalContract`) runs on.

Each is a subclass of the kit that says only how to make (and, where it persists, reopen) a journal;
test_journal_contract.py runs the whole contract on each. To add an adapter, subclass the kit here and
in test_journal_contract.py, and list it in ADAPTERS (other suites, such as the projections', run on
every adapter listed).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from tests.helpers.pg_fixtures import pg_store_url
from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal
from waybook.stores import JournalStore, open_store
from waybook.testing import JournalContract, StoreJournalContract


class InMemory(JournalContract):
    def make_journal(self, directory: Path) -> SessionJournal:
        return InMemoryJournal("conformance")


class Jsonl(JournalContract):
    def make_journal(self, directory: Path) -> SessionJournal:
        return JsonlJournal(directory / "journal.jsonl")

    def reopen_journal(self, journal: SessionJournal) -> SessionJournal:
        assert isinstance(journal, JsonlJournal)
        journal.close()
        return JsonlJournal(journal.path, create=False)


class JsonlGroupCommit(Jsonl):
    def make_journal(self, directory: Path) -> SessionJournal:
        return JsonlJournal(directory / "journal.jsonl", durability="group")


class UrlStore(StoreJournalContract):
    """A store opened by URL; persistent stores reopen from the same URL."""

    def url(self, directory: Path) -> str:
        raise NotImplementedError

    def make_store(self, directory: Path) -> JournalStore:
        return open_store(self.url(directory))


class PersistentUrlStore(UrlStore):
    def reopen_store(self, store: JournalStore) -> JournalStore:
        return open_store(store.url)


class InProcessStore(UrlStore):
    def url(self, directory: Path) -> str:
        return "memory:"


class DirectoryStore(PersistentUrlStore):
    def url(self, directory: Path) -> str:
        return f"file:{directory}/store"


class SqliteStore(PersistentUrlStore):
    def url(self, directory: Path) -> str:
        return f"sqlite:{directory}/store.db"


class PostgresqlStore(PersistentUrlStore):
    def url(self, directory: Path) -> str:
        return pg_store_url()  # a fresh schema each time; skips (fails under CI=true) with no server


@attrs.frozen
class Adapter:
    name: str
    contract: type[JournalContract]

    def make(self, tmp: Path) -> SessionJournal:
        """A fresh, empty journal of this adapter (`tmp` is an empty directory of its own)."""
        return self.contract().make_journal(tmp)


ADAPTERS: list[Adapter] = [
    Adapter("in_memory", InMemory),
    Adapter("jsonl", Jsonl),
    Adapter("jsonl_group", JsonlGroupCommit),
    Adapter("memory_store", InProcessStore),
    Adapter("directory_store", DirectoryStore),
    Adapter("sqlite_store", SqliteStore),
    Adapter("postgresql_store", PostgresqlStore),
]
