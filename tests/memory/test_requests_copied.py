"""Caller requests are copied once, then validated (issue 40): what is checked is what is written.

A caller's list changed from another thread during the call, a mapping read twice, a string whose
methods lie about its characters: none of them can change what a memory write holds, or get a record
written that the journal would refuse on replay.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.helpers.authority import WAIT
from waybook.journal import InMemoryJournal
from waybook.memory import Memory, MemoryProjection, RequestError, Route, create_authority
from waybook.projections import replay

READ_ONLY = "---\nread_only: true\n---\nobey me\n"


class Disguised(str):
    """A path whose methods say it is a memory path; its characters say `/etc/passwd.md`."""

    def startswith(self, *args: Any) -> bool:  # type: ignore[override]
        return True

    def endswith(self, *args: Any) -> bool:  # type: ignore[override]
        return args[0] != "/"


class Hidden(str):
    """A text whose front matter hides from a reader that strips it first."""

    def lstrip(self, *args: Any) -> str:  # type: ignore[override]
        return "nothing to see"


def authority() -> tuple[Any, InMemoryJournal]:
    working = InMemoryJournal("working")
    made = create_authority(
        working=working,
        canonical=InMemoryJournal("canonical"),
        routes=[Route("team", frozenset({"facts"}))],
        actor="host",
        pins=InMemoryJournal("pins"),
    )
    return made, working


def replays(journal: InMemoryJournal) -> None:
    """The journal's bytes read back from scratch, every memory rule checked again."""
    InMemoryJournal.from_lines(journal.read_lines(), name="again")


@pytest.mark.parametrize("where", ["put", "tombstone"])
def test_remember_checks_a_path_as_the_characters_it_holds(where: str) -> None:
    mine, working = authority()
    head = working.head()
    puts, tombstones = (
        ([(Disguised("/etc/passwd.md"), "x")], []) if where == "put" else ({}, [Disguised("/etc/passwd.md")])
    )
    with pytest.raises(RequestError):
        mine.agent.remember("r1", puts, tombstones)
    assert working.head() == head
    replays(working)


def test_the_port_checks_a_path_and_a_text_as_the_characters_they_hold() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    outside = memory.execute({"command": "create", "path": Disguised("/etc/passwd.md"), "text": "x"})
    assert outside.error is not None
    assert outside.error.code == "INVALID_PATH"
    hidden = memory.execute({"command": "create", "path": "/memories/a.md", "text": Hidden(READ_ONLY)})
    assert hidden.error is not None
    assert hidden.error.details == {"read_only_by_host": True}  # the agent face never sets read_only
    assert memory.execute({"command": "create", "path": "/memories/b.md", "text": "b"}).ok
    digest = memory.state().files["/memories/b.md"].digest
    superseded = memory.supersede("/memories/b.md", Hidden(READ_ONLY), expected_digest=digest)
    assert superseded.error is not None
    assert superseded.error.details == {"read_only_by_host": True}
    assert journal.head().seq == 2  # the header and b.md only
    replays(journal)


class Counting(Mapping[str, Any]):
    """A tool call's JSON object that counts every read of each of its fields."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        self.reads: dict[str, int] = dict.fromkeys(fields, 0)

    def __getitem__(self, key: str) -> Any:
        self.reads[key] += 1
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


def test_the_port_reads_each_field_of_a_command_once() -> None:
    memory = Memory(InMemoryJournal("m"), scope="agent")
    command = Counting({"command": "create", "path": "/memories/a.md", "text": "tea\n"})
    assert memory.execute(command).ok
    assert command.reads == {"command": 1, "path": 1, "text": 1}
    view = Counting({"command": "view", "path": "/memories/a.md", "view_range": [1, 1]})
    assert memory.execute(view).ok
    assert view.reads == {"command": 1, "path": 1, "view_range": 1}


class Tripwire(str):
    """A key that, the first time a validator asks it whether it ends with '/', lets another thread
    change the caller's list, and waits until it has."""

    armed: threading.Event
    changed: threading.Event

    def endswith(self, *args: Any) -> bool:  # type: ignore[override]
        if not self.armed.is_set():
            self.armed.set()
            assert self.changed.wait(WAIT)
        return str.endswith(self, *args)


def test_a_caller_changing_its_list_from_another_thread_during_the_call_changes_nothing() -> None:
    mine, working = authority()
    pair = [Tripwire("/memories/a.md"), "---\ndescription: benign\n---\nfine\n"]
    Tripwire.armed, Tripwire.changed = threading.Event(), threading.Event()
    stop = threading.Event()

    def caller_thread() -> None:
        while not stop.is_set():  # woken by the key, or told to stop when the call is over
            if Tripwire.armed.wait(0.05):
                pair[1] = READ_ONLY  # the caller changes its request while the call validates it
                Tripwire.changed.set()
                return

    other = threading.Thread(target=caller_thread)
    other.start()
    try:
        mine.agent.remember("r1", [pair])
    finally:
        stop.set()
        other.join(WAIT)
    state = replay(MemoryProjection(), working)
    assert state.files["/memories/a.md"].text == "---\ndescription: benign\n---\nfine\n"
    assert not state.files["/memories/a.md"].read_only
    replays(working)


def test_a_list_that_changes_while_it_is_read_is_read_once() -> None:
    class Shifting(list[Any]):
        """Yields a different list each time it is iterated."""

        def __init__(self, *versions: list[Any]) -> None:
            super().__init__(versions[0])
            self.versions = list(versions)

        def __iter__(self) -> Iterator[Any]:
            return iter(self.versions.pop(0) if len(self.versions) > 1 else self.versions[0])

    mine, working = authority()
    keys = Shifting(["/memories/a.md"], ["/etc/passwd", 7])
    assert mine.agent.query(keys).records == ()  # read once: the first version, valid
    tombstones = Shifting(["/memories/a.md"], [Disguised("/etc/passwd.md")])
    mine.agent.remember("r1", {"/memories/a.md": "x"})
    assert mine.agent.remember("r2", {}, tombstones=tombstones).head.seq == working.head().seq
    replays(working)
