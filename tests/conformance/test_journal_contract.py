"""The journal contract (docs/journal-contract.md) on every adapter and store of waybook.

The tests are the kit's (`waybook.testing.JournalContract`, one test per numbered requirement and
rule); each class here is one adapter of conftest.ADAPTERS, exactly as a third-party adapter proves
itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from tests.conformance import conftest
from waybook.journal import InMemoryJournal, SessionJournal
from waybook.model import AppendResult, Head, NewRecord
from waybook.testing import JournalContract


class TestInMemoryJournal(conftest.InMemory):
    pass


class TestJsonlJournal(conftest.Jsonl):
    pass


class TestJsonlJournalWithFsync(conftest.JsonlFsync):
    pass


class TestInProcessStore(conftest.InProcessStore):
    pass


class TestInProcessStoreOnAnotherJournal(conftest.InProcessStore):
    """A kit run on a journal of another id than the default writes headers naming that id (a store
    refuses a header naming another journal: HeaderMismatchError)."""

    journal_id = "another-journal"


class TestDirectoryStore(conftest.DirectoryStore):
    pass


class TestSqliteStore(conftest.SqliteStore):
    pass


class TestPostgresqlStore(conftest.PostgresqlStore):
    @pytest.mark.slow  # hundreds of round trips per example: CI runs it; -m "not slow" leaves it out
    def test_journal_matches_a_list_model(self) -> None:
        super().test_journal_matches_a_list_model()


def test_every_adapter_listed_runs_the_whole_contract() -> None:
    classes = [c for name, c in globals().items() if name.startswith("Test") and isinstance(c, type)]
    assert {c.__mro__[1] for c in classes} == {adapter.contract for adapter in conftest.ADAPTERS}


class CarelessJournal(InMemoryJournal):
    """Appends after whatever head it holds, ignoring the head its writer presents: the one mistake
    compare-and-append exists to stop."""

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        return super().append(records, expected=self.head())


class Careless(JournalContract):
    def make_journal(self, directory: Path) -> SessionJournal:
        return CarelessJournal("careless")


def test_the_contract_fails_an_adapter_that_ignores_the_head_its_writer_presents(tmp_path: Path) -> None:
    kit = Careless()
    journal = kit.make_journal(tmp_path)
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        kit.test_r2_a_head_with_the_right_seq_but_another_digest_is_stale(journal)
    kit.test_r1_committed_positions_are_one_based_and_gapless(kit.make_journal(tmp_path))  # what it keeps


class FlushingJsonl(conftest.Jsonl):
    """The JSONL adapter under `flush`: appends return before their bytes are fsynced."""

    options: ClassVar[dict[str, str]] = {"durability": "flush"}


def test_the_contract_fails_an_adapter_that_acknowledges_before_the_disk_has_it(tmp_path: Path) -> None:
    kit = FlushingJsonl()
    journal = kit.make_journal(tmp_path)
    try:
        with pytest.raises(AssertionError, match="returned before it was on disk"):
            kit.test_r15_an_append_that_returns_is_durable_under_the_default_options(journal)
    finally:
        journal.close()


def test_an_adapter_that_shows_no_durability_evidence_is_told_what_to_define(tmp_path: Path) -> None:
    kit = Careless()
    with pytest.raises(NotImplementedError, match=r"acknowledged_durable\(journal\) to prove R15"):
        kit.test_r15_an_append_that_returns_is_durable_under_the_default_options(kit.make_journal(tmp_path))
