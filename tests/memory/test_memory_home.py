"""Issue 32: a home per identity, seed blocks written once, reminders as a pure projection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from waybook import Session
from waybook.journal import InMemoryJournal
from waybook.memory import (
    DEFAULT_BLOCKS,
    Memory,
    RequestError,
    Route,
    SeedBlock,
    create_authority,
    home,
    reminders,
    seed_blocks,
)
from waybook.memory.tools import default_store_url, waybook_home
from waybook.memory.tools.reflection import ReflectionScheduler
from waybook.model._records import ToolCallBlock
from waybook.stores import MemoryStore, open_store

# --- home -------------------------------------------------------------------------------------------


def test_waybook_home_follows_the_environment_then_xdg_then_the_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WAYBOOK_HOME", str(tmp_path / "wb"))
    assert waybook_home() == tmp_path / "wb"
    assert default_store_url() == f"file:{tmp_path / 'wb' / 'store'}"
    monkeypatch.delenv("WAYBOOK_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert waybook_home() == tmp_path / "data" / "waybook"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert waybook_home() == tmp_path / "user" / ".local" / "share" / "waybook"


def test_home_creates_the_identity_journals_on_first_use_and_opens_them_after(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WAYBOOK_HOME", str(tmp_path / "wb"))
    with home("coder:waybook:alice") as first:
        assert first.created == ("working", "canonical", "pins")
        note = "---\ndescription: a note\n---\nx\n"  # a home's notes need a description
        assert first.memory().execute({"command": "create", "path": "/memories/a.md", "text": note}).ok
        working_id = first.working.name
    assert (tmp_path / "wb" / "store").is_dir()
    with home("coder:waybook:alice") as again:
        assert again.created == ()
        assert again.working.name == working_id
        assert "/memories/a.md" in again.memory().state().files
    with open_store(f"file:{tmp_path / 'wb' / 'store'}") as store:
        ids = sorted(info.journal_id for info in store.list())
    assert ids == [
        "memory:coder:waybook:alice:canonical",
        "memory:coder:waybook:alice:pins",
        "memory:coder:waybook:alice:working",
    ]


def test_home_takes_a_store_and_leaves_it_open() -> None:
    store = MemoryStore()
    with home("agent", store=store) as mine:
        authority = create_authority(
            working=mine.working,
            canonical=mine.canonical,
            pins=mine.pins,
            routes=[Route("shared", frozenset({"facts"}))],
            actor="host",
        )
        authority.agent.remember(
            "r1", {"/memories/fact.md": "---\ndescription: a fact\n---\nthe sky is blue"}
        )
        assert authority.agent.nominate(["/memories/fact.md"], "shared", "facts").records
    with home("other", store=store) as theirs:
        assert theirs.created == ("working", "canonical", "pins")
    assert store.exists("memory:agent:working")  # still open: the caller owns it
    store.close()


@pytest.mark.parametrize("identity", ["", "has space", "-leading", "a/b", "x" * 97, 7])
def test_an_identity_that_cannot_name_journals_is_refused_before_anything_is_created(
    identity: object,
) -> None:
    store = MemoryStore()
    with pytest.raises(RequestError, match="memory identity"):
        home(identity, store=store)  # type: ignore[arg-type]
    assert list(store.list()) == []


# --- seed blocks ------------------------------------------------------------------------------------


def test_the_default_blocks_are_written_once_in_one_batch_with_a_receipt() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    receipt = seed_blocks(memory)
    assert receipt.written
    assert receipt.paths == ("/memories/persona.md", "/memories/project.md", "/memories/user.md")
    assert (receipt.seq - receipt.first_seq + 1, receipt.digest) == (3, journal.head().digest)
    for block in DEFAULT_BLOCKS:
        note = memory.state().files[block.path]
        assert note.text.startswith("---\ndescription: ")
    head = journal.head()
    again = seed_blocks(memory)
    assert journal.head() == head, "re-running writes nothing"
    assert attrs_equal_but_written(again, receipt)


def attrs_equal_but_written(a: object, b: object) -> bool:
    import attrs

    return attrs.evolve(a, written=True) == b  # type: ignore[misc]


def test_seeding_never_puts_back_a_note_the_agent_deleted() -> None:
    memory = Memory(InMemoryJournal("m"), scope="agent")
    seed_blocks(memory)
    assert memory.execute({"command": "delete", "path": "/memories/persona.md"}).ok
    assert not seed_blocks(memory).written
    assert "/memories/persona.md" not in memory.state().files


def test_a_harness_passes_its_own_blocks_and_existing_notes_are_not_overwritten() -> None:
    memory = Memory(InMemoryJournal("m"), scope="agent")
    assert memory.execute({"command": "create", "path": "/memories/user.md", "text": "mine\n"}).ok
    own = [
        SeedBlock("/memories/user.md", "the user", "x\n"),
        SeedBlock("/memories/rules.md", "rules", "be kind\n", read_only=True),
    ]
    receipt = seed_blocks(memory, own)
    assert receipt.paths == ("/memories/rules.md",)
    files = memory.state().files
    assert files["/memories/user.md"].text == "mine\n"
    assert files["/memories/rules.md"].read_only


def test_a_seed_the_port_refuses_writes_nothing() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    head = journal.head()
    with pytest.raises(RequestError, match="seed blocks were refused"):
        seed_blocks(memory, {"/memories/ok.md": "fine", "/memories/bad.exe": "no"})
    assert journal.head() == head


def test_a_home_is_seeded_through_its_working_memory() -> None:
    with home("agent", store=MemoryStore()) as mine:
        assert seed_blocks(mine).written
        assert not seed_blocks(mine).written
        assert len(mine.memory().state().files) == 3


# --- reminders --------------------------------------------------------------------------------------


def session_with_calls(name: str, *call_ids: str) -> InMemoryJournal:
    journal = InMemoryJournal(name)
    session = Session.create(journal)
    for call_id in call_ids:
        session.user("do it")
        session.assistant([ToolCallBlock(call_id=call_id, name="memory")], stop_reason="tool_use")
        session.tool_result(call_id, "ok")
    return journal


def test_reminders_name_missing_descriptions_near_limits_stale_notes_and_a_pending_reflection() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    seed_blocks(memory)
    assert memory.execute({"command": "create", "path": "/memories/bare.md", "text": "x"}, call_id="c1").ok
    big = "---\ndescription: big\n---\n" + "y" * 60_000
    assert memory.execute({"command": "create", "path": "/memories/big.md", "text": big}, call_id="c2").ok
    sessions = [session_with_calls("s1", "c1"), session_with_calls("s2", "c2"), session_with_calls("s3")]
    ReflectionScheduler(journal, sessions, step_threshold=1).request(reason="end of day")
    block = reminders(journal, sessions=sessions, stale_after=2)
    kinds = [(item.kind, item.path) for item in block.items]
    assert kinds == [
        ("no_description", "/memories/bare.md"),
        ("near_file_limit", "/memories/big.md"),
        ("stale", "/memories/bare.md"),  # c1 was in s1, not in the last two sessions
        ("stale", "/memories/persona.md"),  # seeded outside any session
        ("stale", "/memories/project.md"),
        ("stale", "/memories/user.md"),
        ("reflection", None),
    ]
    assert block.text.startswith(f"Memory reminders (memory at seq {journal.head().seq}):\n")
    assert "A reflection (manual: end of day) is pending." in block.text
    assert block.memory == journal.head()
    assert [seq for _, seq in block.sessions] == [s.head().seq for s in sessions]


def test_reminders_are_the_same_bytes_for_the_same_journal_positions() -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent")
    assert memory.execute({"command": "create", "path": "/memories/bare.md", "text": "x"}).ok
    at = journal.head().seq
    first = reminders(journal)
    assert memory.execute({"command": "create", "path": "/memories/more.md", "text": "y"}).ok
    assert reminders(journal, at=at) == first
    assert reminders(journal).sha256 != first.sha256
    shown = reminders(journal, at=at).text
    assert shown.startswith("Memory reminders (memory at seq 2):\n- /memories/bare.md")


def test_a_healthy_memory_has_no_reminders() -> None:
    memory = Memory(journal := InMemoryJournal("m"), scope="agent")
    seed_blocks(memory)
    assert reminders(journal).text == ""
    assert reminders(journal, sessions=[session_with_calls("s1")], stale_after=2).items == ()


def test_the_day_one_environment_is_never_the_users_own(tmp_path: Path) -> None:
    """The docs' day-one block sets WAYBOOK_HOME itself; run as a fresh process it touches only it."""
    code = (
        "import os, tempfile; os.environ['WAYBOOK_HOME'] = tempfile.mkdtemp();"
        "from waybook.memory import home, seed_blocks;"
        "h = home('agent');"
        "print(seed_blocks(h).written, h.store.url.startswith('file:' + os.environ['WAYBOOK_HOME']))"
    )
    env = {k: v for k, v in os.environ.items() if k != "WAYBOOK_HOME"} | {"HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["True", "True"]
    assert not (tmp_path / ".local").exists()
