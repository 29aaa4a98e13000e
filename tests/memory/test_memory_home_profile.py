"""Every memory `home(identity)` makes needs a description on every note (issue 40), whoever writes:
the Memory port, the authority's `remember`, a raw append; a home made before the rule still holds its
port to it."""

from __future__ import annotations

import pytest

from tests.helpers.builders import AT
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Route, create_authority, home
from waybook.model import MemoryWrite, NewRecord
from waybook.model._errors import MemoryRuleError
from waybook.stores import MemoryStore

DESCRIBED = "---\ndescription: what the user prefers\n---\ntea\n"


def test_a_note_without_a_description_is_refused_by_the_port_of_a_home() -> None:
    with home("coder", store=MemoryStore()) as mine:
        memory = mine.memory()
        bare = memory.execute({"command": "create", "path": "/memories/todo.md", "text": "ship it\n"})
        assert not bare.ok
        assert bare.error is not None
        assert (bare.error.code, bare.error.details) == ("INVALID_ARGUMENT", {"description_required": True})
        assert memory.execute({"command": "create", "path": "/memories/prefs.md", "text": DESCRIBED}).ok
        emptied = memory.execute(
            {
                "command": "str_replace",
                "path": "/memories/prefs.md",
                "old_text": "description: what the user prefers",
                "new_text": "description:",
            }
        )
        assert not emptied.ok
        assert "/memories/todo.md" not in memory.state().files


def test_every_writer_of_a_home_is_held_to_descriptions() -> None:
    with home("coder", store=MemoryStore()) as mine:
        for journal in (mine.working, mine.canonical):
            header = next(iter(journal.read(limit=1))).body
            assert header.metadata["require_description"] is True  # type: ignore[union-attr]
        authority = create_authority(
            working=mine.working,
            canonical=mine.canonical,
            routes=[Route("team", frozenset({"facts"}))],
            actor="host",
            pins=mine.pins,
        )
        with pytest.raises(MemoryRuleError) as remembered:
            authority.agent.remember("r1", {"/memories/a.md": "no description"})
        assert remembered.value.code == "INVALID_ARGUMENT"
        body = MemoryWrite(path="/memories/raw.md", text="raw\n", digest=content_digest("raw\n"))
        with pytest.raises(MemoryRuleError):
            mine.canonical.append([NewRecord(id="raw", at=AT, body=body)], expected=mine.canonical.head())
        assert authority.agent.remember("r2", {"/memories/a.md": DESCRIBED}).head.seq == 2


def test_a_home_made_before_the_rule_still_holds_its_port_to_descriptions() -> None:
    store = MemoryStore()
    for name, role in (("working", "working_memory"), ("canonical", "canonical_memory"), ("pins", "pin")):
        metadata = {"kind": role.replace("_", "-"), "scope": "old", "identity": "old"}  # no profile yet
        store.create(f"memory:old:{name}", role=role, metadata=metadata if role != "pin" else {})
    with home("old", store=store) as mine:
        assert mine.created == ()
        bare = mine.memory().execute({"command": "create", "path": "/memories/a.md", "text": "x\n"})
        assert not bare.ok
        assert bare.error is not None
        assert bare.error.details == {"description_required": True}
        assert mine.memory().execute({"command": "create", "path": "/memories/a.md", "text": DESCRIBED}).ok
