"""Issue 40, point 3: `read_only` is host power. The agent face never sets or clears it; the host sets
and clears it (`Memory.set_read_only`) and can always remove a note (`Memory.remove`,
`clear_all_memory`), so a full memory never stays stuck."""

from __future__ import annotations

import pytest

from tests.helpers.builders import AT
from waybook.journal import InMemoryJournal
from waybook.memory import Limits, Memory, RequestError, Route, create_authority
from waybook.model import MemoryDelete, NewRecord
from waybook.model._errors import MemoryRuleError

NOTE = "---\ndescription: rules\n---\nbe kind\n"
LOCKED = "---\ndescription: rules\nread_only: true\n---\nbe kind\n"


def port(**options: object) -> Memory:
    return Memory(InMemoryJournal("m"), scope="agent", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "command",
    [
        {"command": "create", "path": "/memories/r.md", "text": LOCKED},
        {
            "command": "str_replace",
            "path": "/memories/a.md",
            "old_text": "description: rules\n",
            "new_text": "description: rules\nread_only: true\n",
        },
        {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "text": "read_only: true"},
        {
            "command": "apply_patch",
            "patch": (
                "*** Begin Patch\n*** Add File: /memories/p.md\n+---\n+read_only: true\n+---\n*** End Patch"
            ),
        },
    ],
    ids=lambda c: c["command"],
)
def test_the_agent_face_never_makes_a_note_read_only(command: dict[str, object]) -> None:
    memory = port()
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": NOTE}).ok
    refused = memory.execute(command)
    assert refused.error is not None
    assert (refused.error.code, refused.error.details) == ("INVALID_ARGUMENT", {"read_only_by_host": True})
    assert not any(f.read_only for f in memory.state().files.values())


def test_remember_never_makes_a_note_read_only() -> None:
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=InMemoryJournal("c"),
        routes=[Route("r", frozenset({"p"}))],
        actor="h",
        pins=InMemoryJournal("p"),
    )
    with pytest.raises(RequestError, match="the host sets that"):
        authority.agent.remember("r1", {"/memories/r.md": LOCKED})


def test_the_host_sets_and_clears_read_only_and_the_agent_edits_in_between_are_refused() -> None:
    memory = port()
    assert memory.execute({"command": "create", "path": "/memories/r.md", "text": NOTE}).ok
    assert memory.set_read_only("/memories/r.md", True).ok
    assert memory.state().files["/memories/r.md"].read_only
    edit = memory.execute(
        {"command": "str_replace", "path": "/memories/r.md", "old_text": "kind", "new_text": "x"}
    )
    assert edit.error is not None
    assert edit.error.details == {"read_only": True}
    assert memory.set_read_only("/memories/r.md", False).ok
    assert memory.state().files["/memories/r.md"].text == NOTE
    assert memory.execute({"command": "delete", "path": "/memories/r.md"}).ok


def test_the_host_can_always_remove_a_read_only_note_and_a_full_memory_is_not_stuck() -> None:
    memory = port(limits=Limits(max_files=2))
    for name in ("a", "b"):
        assert memory.execute({"command": "create", "path": f"/memories/{name}.md", "text": NOTE}).ok
        assert memory.set_read_only(f"/memories/{name}.md", True).ok
    full = memory.execute({"command": "create", "path": "/memories/c.md", "text": NOTE})
    assert full.error is not None
    assert full.error.code == "LIMIT_EXCEEDED"  # nothing can be evicted: every note is read-only
    assert memory.remove("/memories/a.md").ok  # the host's delete
    assert memory.execute({"command": "create", "path": "/memories/c.md", "text": NOTE}).ok
    assert memory.remove("/memories").ok  # everything, read-only notes included
    assert memory.state().files == {}


def test_a_raw_append_removes_a_read_only_note_only_as_the_host() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    assert memory.execute({"command": "create", "path": "/memories/r.md", "text": NOTE}).ok
    assert memory.set_read_only("/memories/r.md", True).ok
    agent = NewRecord(id="x1", at=AT, body=MemoryDelete(paths=("/memories/r.md",), reason="delete"))
    with pytest.raises(MemoryRuleError):
        journal.append([agent], expected=journal.head())
    host = NewRecord(id="x2", at=AT, body=MemoryDelete(paths=("/memories/r.md",), reason="host"))
    journal.append([host], expected=journal.head())
    assert memory.state().files == {}
