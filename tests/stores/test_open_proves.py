"""A default `store.open(id)` proves what it serves (issue 27): a same-length change to a committed
record's bytes, made at any time after the writer closed (here at once, within the same second), is
refused with a JournalError, on every store with a fast reopen: the directory store (JSONL journals
with their checkpoints) and SQLite (which proves every row it reads)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.builders import chat
from waybook.journal._jsonl import checkpoint_path
from waybook.model import JournalError
from waybook.stores import open_store


def write(url: str, nodes: int) -> None:
    with open_store(url) as store:
        journal = store.create("s")
        head = journal.head()
        for record in chat(nodes):
            head = journal.append([record], expected=head).head
        journal.close()


def changed(data: bytes, where: float, delta: int, end: int) -> bytes:
    """`data` with one byte in [0, end) changed, same length."""
    offset = min(int(where * end), end - 1)
    out = bytearray(data)
    out[offset] = (out[offset] + delta) % 256
    return bytes(out)


@settings(max_examples=25, deadline=None)
@given(nodes=st.integers(2, 40), where=st.floats(0, 1), delta=st.integers(1, 255))
def test_a_directory_store_refuses_a_journal_changed_in_its_checkpointed_prefix(
    tmp_path_factory: pytest.TempPathFactory, nodes: int, where: float, delta: int
) -> None:
    root = tmp_path_factory.mktemp("store")
    write(f"file:{root}", nodes)
    path = root / "journals" / "s.jsonl"
    assert checkpoint_path(path).is_file()
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    # Before the last record and the newline ending the one before it (changed, that newline makes the
    # last two records one torn final line: reported as damage, never served, appends refused).
    path.write_bytes(changed(data, where, delta, last - 1))
    with open_store(f"file:{root}") as store, pytest.raises(JournalError):
        store.open("s")


@settings(max_examples=25, deadline=None)
@given(nodes=st.integers(2, 40), row=st.floats(0, 1), where=st.floats(0, 1), delta=st.integers(1, 255))
def test_a_sqlite_store_refuses_a_journal_whose_stored_bytes_changed(
    tmp_path_factory: pytest.TempPathFactory, nodes: int, row: float, where: float, delta: int
) -> None:
    file = tmp_path_factory.mktemp("store") / "s.db"
    write(f"sqlite:{file}", nodes)
    with sqlite3.connect(file) as db:
        rows = db.execute("SELECT position, line FROM records WHERE journal_id = 's' ORDER BY seq").fetchall()
        position, line = rows[min(int(row * len(rows)), len(rows) - 1)]
        db.execute(
            "UPDATE records SET line = ? WHERE position = ?",
            (changed(line, where, delta, len(line)), position),
        )
    with open_store(f"sqlite:{file}") as store, pytest.raises(JournalError):
        store.open("s")


def test_a_store_journal_untouched_opens(tmp_path: Path) -> None:
    for url in (f"file:{tmp_path / 'dir'}", f"sqlite:{tmp_path / 's.db'}"):
        write(url, 5)
        with open_store(url) as store:
            assert store.open("s").head().seq == 6
