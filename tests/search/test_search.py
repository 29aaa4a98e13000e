"""Issue 22: ranked full-text search over a store (FTS5, BM25), rebuildable and fed incrementally."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook.memory import Memory
from waybook.search import SearchError, SearchIndex, default_index_path
from waybook.stores import JournalStore, open_store


def fill(store: JournalStore) -> None:
    chat = Session(store.create("chat-1", metadata={"user": "ada"}))
    chat.user("I prefer oat milk in my coffee")
    chat.assistant("Noted: oat milk, no sugar.")
    other = Session(store.create("chat-2"))
    other.user("what is the capital of France?")
    other.assistant("Paris. Milk is not involved.")
    notes = store.create("ada-notes", role="working_memory", metadata={"scope": "ada"})
    Memory(notes, scope="ada").execute(
        {"command": "create", "path": "/memories/prefs.md", "text": "oat milk"}
    )


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    target = tmp_path / ("store" if request.param == "file" else "store.db")
    return f"{request.param}:{target}"


def test_results_are_ranked_and_cite_journal_seq_and_id(url: str, tmp_path: Path) -> None:
    with open_store(url) as store:
        fill(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            assert index.update(store) > 0
            hits = index.search("oat milk")
            assert {h.journal for h in hits} == {"chat-1", "ada-notes"}  # every word must match
            assert hits == sorted(hits, key=lambda h: -h.score)
            for hit in hits:
                record = next(iter(store.open(hit.journal).read(after=hit.seq - 1, limit=1)))
                assert record.id == hit.id
            assert "[oat]" in hits[0].snippet
            assert [h.journal for h in index.search("milk", role="assistant")] in (
                ["chat-1", "chat-2"],
                ["chat-2", "chat-1"],
            )
            assert [h.journal for h in index.search("milk", journal="chat-2")] == ["chat-2"]
            assert [h.role for h in index.search("milk", journal_role="working_memory")] == ["memory"]
            assert [h.kind for h in index.search("milk", kind="waybook.user/2")] == ["waybook.user/2"]
            assert index.search("milk", since="2999-01-01T00:00:00Z") == []


def test_the_index_follows_the_feed_incrementally_and_rebuilds_to_the_same_results(
    url: str, tmp_path: Path
) -> None:
    with open_store(url) as store:
        fill(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
            before = index.position
            assert index.update(store) == 0  # nothing new
            Session(store.open("chat-2")).user("almond milk then")
            assert index.update(store) == 1
            assert index.position > before
            live = index.search("milk", limit=50)
            index.rebuild(store)
            assert index.search("milk", limit=50) == live


def test_a_purged_journal_leaves_the_index(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        fill(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
            assert "chat-1" in {h.journal for h in index.search("coffee", limit=50)}
            store.purge("chat-1", reason="user asked to be forgotten")
            index.update(store)
            assert "chat-1" not in {h.journal for h in index.search("milk", limit=50)}
            assert index.search("coffee", limit=50) == [], "the purged text itself is gone from the index"


def test_a_hidden_journal_is_left_out_unless_asked_for(url: str, tmp_path: Path) -> None:
    with open_store(url) as store:
        fill(store)
        store.hide("chat-2", reason="archived")
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
            assert "chat-2" not in {h.journal for h in index.search("milk", limit=50)}
            assert "chat-2" in {h.journal for h in index.search("milk", hidden=True, limit=50)}


class _Torn:
    """A feed entry whose record cannot be read (a store failing in the middle of a batch)."""

    position = 10**9
    journal_id = "chat-1"
    seq = 99

    @property
    def record(self) -> object:
        raise OSError("the disk went away")


class FailingFeed:
    """The real store, except that its feed fails after `good` entries."""

    def __init__(self, store: JournalStore, good: int) -> None:
        self.store, self.good = store, good

    def feed(self, after: int = 0, *, limit: int | None = None) -> list[object]:
        entries: list[object] = list(self.store.feed(after=after, limit=limit))[: self.good]
        return [*entries, _Torn()]


def test_an_update_interrupted_mid_batch_writes_nothing_and_the_next_one_catches_up(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store:
        fill(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            with pytest.raises(OSError, match="disk went away"):
                index.update(FailingFeed(store, good=4))  # type: ignore[arg-type]
            assert index.position == 0
            assert index.search("milk", hidden=True, limit=50) == []
            index.update(store)
            caught_up = index.search("milk", limit=50)
        with SearchIndex(tmp_path / "fresh.sqlite", url) as fresh:
            fresh.update(store)
            assert fresh.search("milk", limit=50) == caught_up


def test_bad_queries_and_foreign_indexes_are_typed_errors(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with SearchIndex(tmp_path / "i.sqlite", url) as index:
        with pytest.raises(SearchError, match="no words"):
            index.search("  ** ")
        assert index.search('"unbalanced AND (') == []  # FTS5 syntax is never passed through
        with pytest.raises(SearchError, match="UTC time"):
            index.search("milk", since="yesterday")
    with pytest.raises(SearchError, match="not of"):
        SearchIndex(tmp_path / "i.sqlite", "sqlite:/elsewhere.db")
    assert default_index_path("file:/a/store/") == Path("/a/store.search.sqlite")
    assert default_index_path("sqlite:///x/s.db?busy_timeout=5") == Path("/x/s.db.search.sqlite")
    assert default_index_path("memory:") is None
    # the index is an ordinary SQLite file with an FTS5 table
    assert sqlite3.connect(tmp_path / "i.sqlite").execute("SELECT count(*) FROM docs").fetchone() == (0,)


def test_waybook_search_prints_ranked_json(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        fill(store)
    run = waybook("search", "oat milk", "--store", url, "--json")
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    assert {r["journal"] for r in results} == {"chat-1", "ada-notes"}
    assert set(results[0]) >= {"journal", "seq", "id", "score", "snippet"}
    assert (tmp_path / "store.search.sqlite").is_file()
    none = waybook("search", "zebra", "--store", url)
    assert none.returncode == 1
    bad = waybook("search", "--store", url, "--", "**")
    assert bad.returncode == 2
    assert "no words" in bad.stderr
