"""JournalTable: a catalog fold's journals, those a snapshot restored kept as rows until asked for."""

from __future__ import annotations

import attrs
import msgspec
import pytest

from waybook.model import StorageError
from waybook.stores._journal_table import JournalTable
from waybook.stores._values import JournalInfo


def table() -> JournalTable:
    rows = [msgspec.Raw(msgspec.json.encode(["session", {"n": n}, n + 2, "t", n == 1])) for n in range(3)]
    return JournalTable.of_rows(["a", "b", "c"], rows, where="DIR/store.snapshot")


def test_a_restored_journal_reads_as_the_journal_info_its_row_holds() -> None:
    journals = table()
    assert "b" in journals
    assert "z" not in journals
    assert len(journals) == 3
    assert journals["b"] == JournalInfo("b", "session", {"n": 1}, 3, "t", hidden=True)
    assert journals.get("z") is None
    assert len(journals) == 3  # (a decoded journal is counted once)


def test_a_journal_set_or_popped_replaces_its_row_and_the_next_snapshot_writes_it() -> None:
    journals = table()
    hidden = attrs.evolve(journals["a"], hidden=True)
    journals["a"] = hidden
    assert journals["a"] is hidden
    assert journals.row("a") == ("session", {"n": 0}, 2, "t", True)
    assert journals.row("c") == msgspec.Raw(b'["session",{"n":2},4,"t",false]')
    assert journals.pop("c") is not None
    assert "c" not in journals
    assert journals.get("c") is None
    assert len(journals) == 2


def test_a_row_that_does_not_decode_says_to_delete_the_snapshot() -> None:
    journals = JournalTable.of_rows(["a"], [msgspec.Raw(b'["session"]')], where="DIR/store.snapshot")
    with pytest.raises(
        StorageError, match=r"DIR/store.snapshot: its row for journal 'a'.*delete the snapshot"
    ):
        journals.get("a")
