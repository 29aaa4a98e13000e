"""The adapters and stores the journal contract kit (`waybook.testing.JournalContract`) runs on.

Each is a subclass of the kit that says only how to make (and, where it persists, reopen) a journal;
test_journal_contract.py runs the whole contract on each. To add an adapter, subclass the kit here and
in test_journal_contract.py, and list it in ADAPTERS (other suites, such as the projections', run on
every adapter listed).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import attrs

from tests.helpers import store_damage
from tests.helpers.faults import SyncTrackingFileOps
from tests.helpers.pg_fixtures import pg_store_url
from waybook import stores
from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal
from waybook.stores import JournalStore, open_store
from waybook.testing import JournalContract, StoreJournalContract


class InMemory(JournalContract):
    def make_journal(self, directory: Path) -> SessionJournal:
        return InMemoryJournal("conformance")

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        return None  # keeps nothing on disk


class Jsonl(JournalContract):
    """The default options (durability `group`), with the system calls watched for R15's evidence."""

    options: ClassVar[dict[str, str]] = {}

    def make_journal(self, directory: Path) -> SessionJournal:
        return JsonlJournal(directory / "journal.jsonl", file_ops=self.watched(), **self.options)

    def reopen_journal(self, journal: SessionJournal) -> SessionJournal:
        assert isinstance(journal, JsonlJournal)
        journal.close()
        return JsonlJournal(journal.path, create=False, file_ops=self.watched(), **self.options)

    def watched(self) -> SyncTrackingFileOps:
        ops: SyncTrackingFileOps = self.__dict__.setdefault("_ops", SyncTrackingFileOps())
        return ops

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        assert isinstance(journal, JsonlJournal)
        return self.watched().synced(journal.path)  # every byte written was fsynced after it


class JsonlFsync(Jsonl):
    options: ClassVar[dict[str, str]] = {"durability": "fsync"}


class Damageable(StoreJournalContract):
    """The store checks' damage hooks, done on the store's own storage (tests/helpers/store_damage.py)."""

    def lose_tail(self, store: JournalStore, journal_id: str, keep: int) -> None:
        store_damage.lose_tail(store.url, journal_id, keep)

    def lose_storage(self, store: JournalStore, journal_id: str) -> None:
        store_damage.lose_storage(store.url, journal_id)

    def alter_record(self, store: JournalStore, journal_id: str, seq: int) -> None:
        store_damage.alter_record(store.url, journal_id, seq)


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

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        return None  # keeps nothing on disk


class DirectoryStore(Damageable):
    """`file:DIR` with its default options, its journals' system calls watched for R15's evidence."""

    def make_store(self, directory: Path) -> JournalStore:
        return stores.DirectoryStore(directory / "store", file_ops=self.watched())

    def reopen_store(self, store: JournalStore) -> JournalStore:
        assert isinstance(store, stores.DirectoryStore)
        return stores.DirectoryStore(store.directory, file_ops=self.watched())

    def watched(self) -> SyncTrackingFileOps:
        ops: SyncTrackingFileOps = self.__dict__.setdefault("_ops", SyncTrackingFileOps())
        return ops

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        store = self.store_of(journal)
        assert isinstance(store, stores.DirectoryStore)
        return self.watched().synced(store.path_of(self.journal_id))


class SqliteStore(PersistentUrlStore, Damageable):
    def url(self, directory: Path) -> str:
        return f"sqlite:{directory}/store.db"

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        store = self.store_of(journal)
        assert isinstance(store, stores.SqliteStore)
        return store.synchronous in ("FULL", "EXTRA")  # each commit waits for the disk (WAL + FULL)


class PostgresqlStore(PersistentUrlStore, Damageable):
    def url(self, directory: Path) -> str:
        return pg_store_url()  # a fresh schema each time; skips (fails under CI=true) with no server

    def acknowledged_durable(self, journal: SessionJournal) -> bool | None:
        from waybook.stores.postgres import PostgresStore  # the postgresql extra

        store = self.store_of(journal)
        assert isinstance(store, PostgresStore)
        engine = store.postgres_engine
        (commit,) = engine.run("SHOW synchronous_commit")[0]
        # Each commit waits for the server's WAL flush. Whether that flush reaches the platter is the
        # server's own `fsync` setting, its operator's choice (the test cluster runs with fsync=off).
        return commit != "off"


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
    Adapter("jsonl_fsync", JsonlFsync),
    Adapter("memory_store", InProcessStore),
    Adapter("directory_store", DirectoryStore),
    Adapter("sqlite_store", SqliteStore),
    Adapter("postgresql_store", PostgresqlStore),
]
