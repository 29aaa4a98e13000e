"""Memory search matches current notes only unless asked for history (issue 40)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook.memory import Memory
from waybook.search import SearchIndex
from waybook.stores import JournalStore, open_store


def remembered(store: JournalStore) -> Memory:
    """A note rewritten, a note deleted, a note renamed, a directory moved."""
    notes = store.create("ada-notes", role="working_memory", metadata={"scope": "ada"})
    memory = Memory(notes, scope="ada")
    for command in (
        {"command": "create", "path": "/memories/drink.md", "text": "oat milk\n"},
        {"command": "create", "path": "/memories/drink.md", "text": "black coffee\n"},
        {"command": "create", "path": "/memories/pets.md", "text": "a zebra named Kim\n"},
        {"command": "delete", "path": "/memories/pets.md"},
        {"command": "create", "path": "/memories/city.md", "text": "lives in Lisbon\n"},
        {"command": "rename", "old_path": "/memories/city.md", "new_path": "/memories/home.md"},
        {"command": "create", "path": "/memories/trips/peru.md", "text": "hiked to Machu Picchu\n"},
        {"command": "rename", "old_path": "/memories/trips", "new_path": "/memories/travel"},
    ):
        assert memory.execute(command).ok, command
    return memory


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    target = tmp_path / ("store" if request.param == "file" else "store.db")
    return f"{request.param}:{target}"


def test_memory_search_matches_current_notes_only_unless_asked_for_history(url: str, tmp_path: Path) -> None:
    with open_store(url) as store:
        remembered(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
            assert index.search("oat") == []  # superseded
            assert index.search("zebra") == []  # deleted
            assert [h.snippet.split("\n")[0] for h in index.search("Lisbon")] == ["/memories/home.md"]
            assert index.search("city") == []  # the old path of a renamed note
            (peru,) = index.search("Machu")
            assert peru.snippet.startswith("/memories/travel/peru.md")
            assert peru.kind == "waybook.memory.rename/1"
            assert [h.seq for h in index.search("oat", history=True)] == [2]
            assert [h.seq for h in index.search("zebra", history=True)] == [4]
            assert len(index.search("Lisbon", history=True)) == 2  # where it was written, where it moved
            current = sorted((h.journal, h.seq) for h in index.search("memories", limit=50))
            index.rebuild(store)
            assert sorted((h.journal, h.seq) for h in index.search("memories", limit=50)) == current


def test_a_note_written_again_after_its_delete_is_current_again(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store:
        memory = remembered(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
            assert index.search("zebra") == []
            memory.execute({"command": "create", "path": "/memories/pets.md", "text": "a zebra again\n"})
            index.update(store)
            assert [h.snippet for h in index.search("zebra")] == ["/memories/pets.md\na [zebra] again\n"]


def test_an_index_of_the_first_schema_is_filled_again_from_the_feed(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store:
        remembered(store)
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            index.update(store)
        old = sqlite3.connect(tmp_path / "i.sqlite", isolation_level=None)
        old.execute("DROP TABLE notes")  # as waybook.search/1 wrote it
        old.execute("UPDATE meta SET value = 'waybook.search/1' WHERE key = 'schema'")
        old.close()
        with SearchIndex(tmp_path / "i.sqlite", url) as index:
            assert index.position == 0
            index.update(store)
            assert index.search("oat") == []
            assert len(index.search("oat", history=True)) == 1


def test_waybook_search_takes_history(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        remembered(store)
    assert waybook("search", "oat", "--store", url, "--json").returncode == 1
    run = waybook("search", "oat", "--store", url, "--history", "--json")
    assert run.returncode == 0, run.stderr
    assert [(h["journal"], h["seq"]) for h in json.loads(run.stdout)] == [("ada-notes", 2)]
