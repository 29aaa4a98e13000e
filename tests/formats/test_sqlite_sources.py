"""Importing another tool's SQLite database leaves its folder as it was: a quiet WAL database gets no
`-wal` or `-shm` file beside it, and a database a live process has open is read with the commits that
are still only in its write-ahead log."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.blocking import finishes
from tests.helpers.paths import FIXTURES
from waybook import JsonlJournal
from waybook.cli import main
from waybook.formats import RefusedFileError
from waybook.formats._sqlite_source import open_read_only
from waybook.formats.langgraph._database import read_thread
from waybook.formats.openai_agents._database import read_session
from waybook.formats.opencode import read_opencode

DATABASES = {  # each database, and the options that choose one of its sessions
    FIXTURES / "openai-agents" / "sqlite-session.db": ["--session", "support-1"],
    FIXTURES / "openai-agents" / "advanced-session.db": [],
    FIXTURES / "langgraph" / "checkpoints.db": ["--thread", "thread-1"],
}


def listing(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


@pytest.mark.parametrize("database", sorted(DATABASES), ids=lambda path: path.name)
def test_importing_a_quiet_wal_database_creates_nothing_beside_it(tmp_path: Path, database: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    copy = Path(shutil.copy(database, source))
    with sqlite3.connect(copy) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    connection.close()
    before = listing(source)
    assert main(["import", "auto", str(copy), *DATABASES[database], "-o", str(tmp_path / "out.jsonl")]) == 0
    assert listing(source) == before


def test_a_database_a_live_writer_has_open_is_read_with_its_uncheckpointed_commits(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=wal")
    writer.execute("PRAGMA wal_autocheckpoint=0")  # every commit stays in the -wal file
    writer.execute("CREATE TABLE t (x)")
    writer.execute("INSERT INTO t VALUES (1), (2)")
    writer.commit()
    assert path.with_name("live.db-wal").stat().st_size > 0
    reader = open_read_only(path)
    try:
        assert reader.execute("SELECT count(*) FROM t").fetchone() == (2,)
    finally:
        reader.close()
        writer.close()


def test_the_imported_journal_from_a_live_database_matches_the_quiet_one(tmp_path: Path) -> None:
    database = FIXTURES / "openai-agents" / "sqlite-session.db"
    quiet, live = tmp_path / "quiet.jsonl", tmp_path / "live.jsonl"
    assert main(["import", "openai-agents", str(database), "--session", "support-1", "-o", str(quiet)]) == 0
    copy = Path(shutil.copy(database, tmp_path / "copy.db"))
    holder = sqlite3.connect(copy)  # a process that has the database open: its -wal is there
    holder.execute("SELECT count(*) FROM sqlite_master").fetchone()
    try:
        assert copy.with_name("copy.db-wal").exists()
        assert main(["import", "openai-agents", str(copy), "--session", "support-1", "-o", str(live)]) == 0
    finally:
        holder.close()
    with JsonlJournal(quiet, readonly=True) as a, JsonlJournal(live, readonly=True) as b:
        assert [r.body for r in a.read()][1:] == [r.body for r in b.read()][1:]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "session.db"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "read",
    [
        lambda path: read_thread(path, None),
        lambda path: read_session(path, None),
        lambda path: read_opencode(path, None),
    ],
    ids=["langgraph", "openai-agents", "opencode"],
)
def test_a_database_reader_refuses_a_fifo_without_waiting(read: Callable[[Path], Any], fifo: Path) -> None:
    with pytest.raises(RefusedFileError, match="a FIFO, not a regular file") as error:
        finishes(lambda: read(fifo))
    assert error.value.path == fifo
