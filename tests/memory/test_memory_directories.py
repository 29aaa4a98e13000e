"""How a directory exists in a memory journal: derived from the records, and it outlives its files.

A directory exists once a file was written or moved below it (or a directory was moved to it), until the
directory itself is deleted or moved: a delete's or a rename's `directories` names it, with every file
below it in the same record. Deleting or moving its last file leaves it, empty, as a directory on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.memory.test_memory_rules import AT, append, memory_journal, put, refused
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.memory import Memory, MemoryProjection
from waybook.model import NewRecord
from waybook.model._records import Header, MemoryDelete, MemoryRename
from waybook.projections import replay

M = "/memories"


def kept(journal: Any) -> list[str]:
    return sorted(replay(MemoryProjection(), journal).kept)


def test_a_directory_outlives_its_last_file_and_goes_when_deleted_itself() -> None:
    memory = Memory(InMemoryJournal(), scope="s")
    assert memory.execute({"command": "create", "path": f"{M}/d/e/a.md", "text": "a"}).ok
    assert memory.execute({"command": "delete", "path": f"{M}/d/e/a.md"}).ok
    assert sorted(memory.state().kept) == [f"{M}/d", f"{M}/d/e"]
    listing = memory.execute({"command": "view", "path": f"{M}/d"})
    assert [(e.name, e.kind) for e in listing.value.entries] == [("e", "directory")]  # type: ignore[union-attr]
    deleted = memory.execute({"command": "delete", "path": f"{M}/d"})
    assert deleted.ok, deleted.error
    assert memory.state().kept == set()
    assert not memory.execute({"command": "view", "path": f"{M}/d"}).ok


def test_an_empty_directory_renames_with_the_empty_directories_below_it() -> None:
    memory = Memory(InMemoryJournal(), scope="s")
    memory.execute({"command": "create", "path": f"{M}/d/e/a.md", "text": "a"})
    memory.execute({"command": "create", "path": f"{M}/d/b.md", "text": "b"})
    memory.execute({"command": "delete", "path": f"{M}/d/e/a.md"})
    renamed = memory.execute({"command": "rename", "old_path": f"{M}/d", "new_path": f"{M}/x/y"})
    assert renamed.ok, renamed.error
    assert sorted(memory.state().kept) == [f"{M}/x", f"{M}/x/y", f"{M}/x/y/e"]
    assert sorted(memory.state().files) == [f"{M}/x/y/b.md"]
    moved = memory.execute({"command": "rename", "old_path": f"{M}/x/y/e", "new_path": f"{M}/z"})
    assert moved.ok, moved.error
    assert sorted(memory.state().kept) == [f"{M}/x", f"{M}/x/y", f"{M}/z"]


def test_the_port_refuses_a_file_where_an_empty_directory_stands() -> None:
    memory = Memory(InMemoryJournal(), scope="s")
    memory.execute({"command": "create", "path": f"{M}/n.md/a.md", "text": "a"})
    memory.execute({"command": "delete", "path": f"{M}/n.md/a.md"})
    created = memory.execute({"command": "create", "path": f"{M}/n.md", "text": "over it"})
    assert created.error is not None
    assert created.error.code == "PATH_CONFLICT"
    renamed = memory.execute({"command": "rename", "old_path": f"{M}/n.md", "new_path": f"{M}/o.md"})
    assert renamed.ok, renamed.error  # a directory named like a file is still a directory


def test_replay_from_disk_gives_the_same_directories(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    with JsonlJournal(path) as journal:
        memory = Memory(journal, scope="s")
        for command in (
            {"command": "create", "path": f"{M}/d/e/a.md", "text": "a"},
            {"command": "create", "path": f"{M}/g/b.md", "text": "b"},
            {"command": "delete", "path": f"{M}/d/e/a.md"},
            {"command": "rename", "old_path": f"{M}/d", "new_path": f"{M}/p/q"},
            {"command": "rename", "old_path": f"{M}/g/b.md", "new_path": f"{M}/b.md"},
            {"command": "delete", "path": f"{M}/p/q/e"},
        ):
            assert memory.execute(command).ok, command
        live = memory.state()
    with JsonlJournal(path) as reopened:  # the journal's rules replay every record again
        rebuilt = replay(MemoryProjection(), reopened)
    assert sorted(rebuilt.kept) == sorted(live.kept) == [f"{M}/g", f"{M}/p", f"{M}/p/q"]
    assert rebuilt.files.keys() == live.files.keys() == {f"{M}/b.md"}
    rebuilt.check_invariants()


def test_records_without_directories_keep_their_bytes() -> None:
    # The new field is left off the wire when empty: old records (and the golden fixtures) are unchanged.
    assert b"directories" not in msgspec.json.encode(MemoryDelete(paths=(f"{M}/a.md",)))
    assert b"directories" not in msgspec.json.encode(MemoryRename(moves=((f"{M}/a.md", f"{M}/b.md"),)))


def test_an_old_journal_replays_to_the_same_files_and_keeps_the_emptied_directories(tmp_path: Path) -> None:
    # Before `directories`, deleting /memories/x.md (a directory) recorded only its files; a later
    # note at that very path must still replay: a file written where an empty directory stands replaces it.
    path = tmp_path / "old.jsonl"
    with JsonlJournal(path) as journal:
        header = Header(journal="old", creator="test", role="working_memory", metadata={"scope": "s"})
        bodies = [
            header,
            put(f"{M}/x.md/a.md", "a"),
            MemoryDelete(paths=(f"{M}/x.md/a.md",)),
            put(f"{M}/x.md", "now a file"),
        ]
        for i, body in enumerate(bodies):
            journal.append([NewRecord(id=f"r{i}", at=AT, body=body)], expected=journal.head())
            if i == 2:
                assert kept(journal) == [f"{M}/x.md"]
    with JsonlJournal(path) as reopened:
        state = replay(MemoryProjection(), reopened)
    assert sorted(state.files) == [f"{M}/x.md"]
    assert state.kept == set()
    state.check_invariants()


def test_the_journal_refuses_a_directory_delete_that_leaves_files_below() -> None:
    journal = memory_journal()
    append(journal, put(f"{M}/d/a.md", "a"), put(f"{M}/d/b.md", "b"))
    refused(journal, "INVALID_ARGUMENT", MemoryDelete(paths=(f"{M}/d/a.md",), directories=(f"{M}/d",)))
    refused(journal, "NOT_FOUND", MemoryDelete(paths=(), directories=(f"{M}/nowhere",)))
    refused(journal, "ROOT_PROTECTED", MemoryDelete(paths=(), directories=(M,)))
    refused(journal, "INVALID_ARGUMENT", MemoryDelete(paths=()))
    append(journal, MemoryDelete(paths=(f"{M}/d/a.md", f"{M}/d/b.md"), directories=(f"{M}/d",)))
    assert kept(journal) == []


@pytest.mark.parametrize(
    ("code", "moves", "directories"),
    [
        ("NOT_FOUND", (), ((f"{M}/nowhere", f"{M}/n"),)),
        ("PATH_CONFLICT", (), ((f"{M}/d", f"{M}/d/inner"),)),
        ("PATH_CONFLICT", (), ((f"{M}/d", f"{M}/g"),)),
        ("PATH_CONFLICT", (), ((f"{M}/d", f"{M}/f.md/under"),)),
        ("INVALID_ARGUMENT", (), ((f"{M}/d", f"{M}/n"),)),  # its file stays behind
        ("INVALID_ARGUMENT", ((f"{M}/d/a.md", f"{M}/elsewhere.md"),), ((f"{M}/d", f"{M}/n"),)),
        ("INVALID_ARGUMENT", (), ()),
    ],
)
def test_the_journal_refuses_a_directory_move_that_breaks_the_tree(
    code: str, moves: tuple[tuple[str, str], ...], directories: tuple[tuple[str, str], ...]
) -> None:
    journal = memory_journal()
    append(journal, put(f"{M}/d/a.md", "a"), put(f"{M}/g/b.md", "b"), put(f"{M}/f.md", "f"))
    refused(journal, code, MemoryRename(moves=moves, directories=directories))
    append(
        journal, MemoryRename(moves=((f"{M}/d/a.md", f"{M}/n/a.md"),), directories=((f"{M}/d", f"{M}/n"),))
    )
    assert kept(journal) == [f"{M}/g", f"{M}/n"]
