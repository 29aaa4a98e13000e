"""The journal contract kit (docs/journal-contract.md, "Prove your adapter").

Subclass `JournalContract` in a pytest module named `test_*.py` and define `make_journal` and
`acknowledged_durable`:

    class TestMyJournal(JournalContract):
        def make_journal(self, directory: Path) -> SessionJournal:
            return MyJournal(directory / "journal.db")

        def acknowledged_durable(self, journal: SessionJournal) -> bool | None:  # R15
            return journal.synchronous() == "FULL"  # your adapter's own evidence

        def reopen_journal(self, journal: SessionJournal) -> SessionJournal:  # optional
            journal.close()
            return MyJournal(journal.path)

A store's journals prove themselves the same way through `StoreJournalContract` and `make_store`.
Each test is one requirement (`test_r7_...` proves R7) or one rule of the page, named for it. The kit
needs pytest (and hypothesis for the state machine): the `test` extra, `pip install 'waybook[test]'`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from waybook.journal import SessionJournal
from waybook.stores import JournalStore
from waybook.testing._journal_base import JournalFactory
from waybook.testing._journal_durability import DurabilityContract
from waybook.testing._journal_log import LogContract
from waybook.testing._journal_rules import SessionRulesContract
from waybook.testing._journal_values import FailClosedContract
from waybook.testing._store_faults import StoreFaultsContract


class ModelContract(JournalFactory):
    model_examples: ClassVar[int] = 60
    """How many generated histories the state machine tries (each on a fresh journal)."""
    model_steps: ClassVar[int] = 30
    """How many steps each history takes at most."""

    def test_journal_matches_a_list_model(self) -> None:
        """Random histories of valid, stale, invalid, retried and branching appends, reads and (where
        the adapter persists) reopens, checked after every step against a plain list model."""
        try:
            from hypothesis import HealthCheck, settings
        except ImportError as missing:
            msg = "the journal contract's state machine needs hypothesis: pip install 'waybook[test]'"
            raise ImportError(msg) from missing

        from waybook.testing._journal_machine import machine_for

        machine = machine_for(self)
        machine.TestCase.settings = settings(
            max_examples=self.model_examples,
            stateful_step_count=self.model_steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        machine.TestCase().runTest()


class JournalContract(
    LogContract, SessionRulesContract, FailClosedContract, DurabilityContract, ModelContract
):
    """Every requirement of docs/journal-contract.md as a test. Define `make_journal(directory)` and
    `acknowledged_durable(journal)` (R15), and `reopen_journal(journal)` where the adapter persists;
    `close_journal` if closing the journal is not enough to release what `make_journal` opened."""


class StoreJournalContract(StoreFaultsContract, JournalContract):
    """The journal contract for the journals of a `JournalStore`. Define `make_store(directory)` and
    `acknowledged_durable(journal)` (`store_of(journal)` gives its store), and `reopen_store(store)`
    where the store persists. Each test runs on journal `journal_id` of a fresh
    store, created without a header (the contract writes its own); the store closes with the journal.
    The store checks (`StoreFaultsContract`: lost records, changed bytes, timeouts, competing writers)
    run on stores of their own; define `lose_tail`, `lose_storage` and `alter_record` to run them all."""

    def make_store(self, directory: Path) -> JournalStore:
        """A fresh, empty store. `directory` is empty and belongs to this store alone."""
        msg = f"{type(self).__name__} must define make_store(directory)"
        raise NotImplementedError(msg)

    def reopen_store(self, store: JournalStore) -> JournalStore:
        """Open the (closed) `store` again: a new object over what it wrote."""
        msg = f"{type(self).__name__} does not reopen stores"
        raise NotImplementedError(msg)

    def persists(self) -> bool:
        return type(self).reopen_store is not StoreJournalContract.reopen_store

    def make_journal(self, directory: Path) -> SessionJournal:
        return self._track(self.make_store(directory), create=True)

    def reopen_journal(self, journal: SessionJournal) -> SessionJournal:
        store = self._release(journal)
        return self._track(self.reopen_store(store), create=False)

    def close_journal(self, journal: SessionJournal) -> None:
        self._release(journal)

    def _track(self, store: JournalStore, *, create: bool) -> SessionJournal:
        try:
            journal = store.create(self.journal_id, header=False) if create else store.open(self.journal_id)
        except BaseException:
            store.close()
            raise
        self._open().append((journal, store))
        return journal

    def store_of(self, journal: SessionJournal) -> JournalStore:
        """The store `journal` came from (for `acknowledged_durable`: a store shows its evidence)."""
        return next(store for opened, store in self._open() if opened is journal)

    def _release(self, journal: SessionJournal) -> JournalStore:
        """Close `journal` and the store it came from; return that store."""
        opened = self._open()
        index = next(i for i, (j, _store) in enumerate(opened) if j is journal)
        _journal, store = opened.pop(index)
        try:
            journal.close()
        finally:
            store.close()
        return store

    def _open(self) -> list[tuple[SessionJournal, JournalStore]]:
        """The journals this test opened, each with its store (kept on the instance pytest makes per test)."""
        opened: list[tuple[SessionJournal, JournalStore]] = self.__dict__.setdefault("_opened", [])
        return opened
