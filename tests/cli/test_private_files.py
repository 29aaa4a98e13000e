"""Issue 45: every file waybook writes that holds session text is 0600, whatever the umask.

One case per kind of writer: JSONL journals and their checkpoints, a directory store's journals and blobs,
a SQLite store's database (and SQLite's -wal and -shm beside it), the search index (and its -wal and
-shm), `view` pages (new and replaced), training exports, and a `--format hf` dataset folder. The search
index and view pages were 0644.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal, Session
from waybook.stores import open_store


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """A umask that lets group and others read what is created (022, the common default)."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def modes(root: Path) -> dict[str, int]:
    """The permission bits of every file under `root` (or of `root`), by relative name."""
    files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    return {str(p.relative_to(root.parent)): stat.S_IMODE(p.stat().st_mode) for p in files}


def assert_private(root: Path) -> None:
    found = modes(root)
    assert found
    assert {name: mode for name, mode in found.items() if mode != 0o600} == {}


def test_jsonl_journals_and_their_checkpoints(tmp_path: Path) -> None:
    branching_session(JsonlJournal(tmp_path / "s.jsonl"))
    assert waybook("verify", tmp_path / "s.jsonl").returncode == 0
    assert_private(tmp_path)


def test_a_directory_store_journals_and_blobs(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        session = Session.create(store.create("s"), blobs=store.blobs, inline_limit=8)
        session.user("a text long enough to go to the blobs")
    assert_private(tmp_path / "store")


def test_a_sqlite_store_and_its_wal(tmp_path: Path) -> None:
    with open_store(f"sqlite:{tmp_path / 'store.db'}") as store:
        session = Session.create(store.create("s"), blobs=store.blobs, inline_limit=8)
        session.user("a text long enough to go to the blobs")
        assert {p.name for p in tmp_path.iterdir()} >= {"store.db", "store.db-wal", "store.db-shm"}
        assert_private(tmp_path)


def test_the_search_index_and_its_wal(tmp_path: Path) -> None:
    store = f"file:{tmp_path / 'store'}"
    with open_store(store) as opened:
        Session.create(opened.create("s")).user("find the needle here")
    index = tmp_path / "index" / "i.sqlite"
    index.parent.mkdir()
    run = waybook("search", "needle", "--store", store, "--index", index)
    assert run.returncode == 0, run.stderr
    assert "needle" in run.stdout
    assert_private(index.parent)


def test_view_pages_new_and_replaced(tmp_path: Path) -> None:
    branching_session(JsonlJournal(tmp_path / "s.jsonl"))
    pages = tmp_path / "pages"
    pages.mkdir()
    assert waybook("view", tmp_path / "s.jsonl", "-o", pages / "s.html").returncode == 0
    assert_private(pages)
    again = waybook("view", tmp_path / "s.jsonl", "-o", pages / "s.html", "--force")
    assert again.returncode == 0, again.stderr
    assert_private(pages)


@pytest.mark.parametrize("fmt", ["openai", "trl-sft", "sharegpt", "archival", "pi"])
def test_exports(tmp_path: Path, fmt: str) -> None:
    branching_session(JsonlJournal(tmp_path / "s.jsonl"))
    out = tmp_path / "out"
    out.mkdir()
    assert waybook("export", tmp_path / "s.jsonl", "--format", fmt, "-o", out / "x.jsonl").returncode == 0
    assert_private(out)


def test_a_hugging_face_dataset_folder(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    branching_session(JsonlJournal(tmp_path / "s.jsonl"))
    run = waybook("export", tmp_path / "s.jsonl", "--format", "hf", "-o", tmp_path / "ds")
    assert run.returncode == 0, run.stderr
    assert_private(tmp_path / "ds")
    assert stat.S_IMODE((tmp_path / "ds").stat().st_mode) == 0o700
