"""The store under the Memory port: revision history, links, read-only files, receipts, the index."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.memory_races import Interleaved
from waybook import Session
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.journal._roles.memory_text import content_digest, front_matter, links_of, logical_lines
from waybook.memory import Memory
from waybook.memory.tools._index import MemoryRequiredError, MemoryUnavailable, load_index, render_index
from waybook.memory.working._port import ScopeMismatchError


def memory(journal: InMemoryJournal | None = None, scope: str = "agent") -> Memory:
    return Memory(journal if journal is not None else InMemoryJournal(), scope=scope)


def create(m: Memory, path: str, text: str, call_id: str | None = None) -> None:
    result = m.execute({"command": "create", "path": path, "text": text}, call_id=call_id)
    assert result.ok, result.error


def test_a_file_history_records_created_superseded_tombstoned_and_recreated() -> None:
    m = memory()
    create(m, "/memories/a.md", "one", "t1")
    create(m, "/memories/a.md", "two", "t2")
    m.execute({"command": "delete", "path": "/memories/a.md"}, call_id="t3")
    create(m, "/memories/a.md", "three", "t4")
    history = m.history("/memories/a.md")
    assert [r.event for r in history] == ["created", "superseded", "tombstoned", "recreated"]
    assert [r.call_id for r in history] == ["t1", "t2", "t3", "t4"]
    assert history[1].prior == content_digest("one")
    assert history[2].prior == content_digest("two")
    assert history[3].prior is None


def test_compare_and_supersede_needs_the_current_digest() -> None:
    m = memory()
    create(m, "/memories/a.md", "one")
    stale = m.supersede("/memories/a.md", "x", expected_digest=content_digest("other"))
    assert stale.error is not None
    assert stale.error.code == "CONFLICT"
    fresh = m.supersede("/memories/a.md", "two", expected_digest=content_digest("one"))
    assert fresh.ok
    assert m.state().files["/memories/a.md"].text == "two"


def test_memory_as_of_any_seq_is_rebuilt_by_replay() -> None:
    m = memory()
    create(m, "/memories/a.md", "one")
    seq = m.state().seq
    create(m, "/memories/a.md", "two")
    m.execute({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"})
    assert {p: f.text for p, f in m.as_of(seq).files.items()} == {"/memories/a.md": "one"}
    assert set(m.state().files) == {"/memories/b.md"}
    renamed = m.history("/memories/b.md")
    assert [r.event for r in renamed] == ["created", "superseded", "renamed"]
    assert renamed[-1].other_path == "/memories/a.md"


def test_edit_and_delete_receipts_list_the_links_they_dropped() -> None:
    m = memory()
    text = (
        "---\ndescription: hub\nlinks: [/memories/x.md]\n---\n"
        "see [y](/memories/y.md) and [z](/memories/z.md)\n"
    )
    create(m, "/memories/hub.md", text)
    edited = m.execute(
        {
            "command": "str_replace",
            "path": "/memories/hub.md",
            "old_text": " and [z](/memories/z.md)",
            "new_text": "",
        }
    )
    assert edited.receipt is not None
    assert edited.receipt.dropped_links == ("/memories/z.md",)
    deleted = m.execute({"command": "delete", "path": "/memories/hub.md"})
    assert deleted.receipt is not None
    assert deleted.receipt.dropped_links == ("/memories/x.md", "/memories/y.md")


def test_a_read_only_file_refuses_every_mutating_command() -> None:
    m = memory()
    create(m, "/memories/dir/rules.md", "never change\n")
    assert m.set_read_only("/memories/dir/rules.md", True).ok  # the host's call
    before = m.state().seq
    for command in (
        {"command": "create", "path": "/memories/dir/rules.md", "text": "x"},
        {"command": "str_replace", "path": "/memories/dir/rules.md", "old_text": "never", "new_text": "x"},
        {"command": "insert", "path": "/memories/dir/rules.md", "insert_line": 0, "text": "x"},
        {"command": "delete", "path": "/memories/dir/rules.md"},
        {"command": "delete", "path": "/memories/dir"},
        {"command": "rename", "old_path": "/memories/dir/rules.md", "new_path": "/memories/r.md"},
        {"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/other"},
    ):
        result = m.execute(command)
        assert result.error is not None, command
        assert "read-only" in result.error.message
    assert m.state().seq == before
    assert m.execute({"command": "view", "path": "/memories/dir/rules.md"}).ok


def test_read_only_files_are_never_evicted() -> None:
    from waybook.memory import Limits

    m = Memory(InMemoryJournal(), scope="a", limits=Limits(max_files=2))
    create(m, "/memories/keep.md", "")
    assert m.set_read_only("/memories/keep.md", True).ok
    create(m, "/memories/b.md", "b")
    third = m.execute({"command": "create", "path": "/memories/c.md", "text": "c"})
    assert third.value.evicted == ("/memories/b.md",)  # type: ignore[union-attr]


def test_the_receipt_goes_into_the_sessions_tool_result() -> None:
    m = memory()
    session = Session.create(InMemoryJournal())
    session.user("remember my name is Ada")
    result = m.execute({"command": "create", "path": "/memories/name.md", "text": "Ada"}, call_id="toolu_1")
    assert result.receipt is not None
    entry = session.tool_result("toolu_1", "saved", tool_name="memory", details=result.receipt.as_details())
    receipt = entry.body.details["memory_receipt"]  # type: ignore[union-attr]
    assert receipt["seq"] == result.receipt.seq
    assert receipt["content_digest"] == content_digest("Ada")
    assert receipt["call_id"] == "toolu_1"


def test_two_ports_racing_on_one_journal_never_half_apply() -> None:
    journal = InMemoryJournal()
    one = memory(journal)
    create(one, "/memories/a.md", "base")
    seen = Interleaved(journal)
    two = Memory(seen, scope="agent")  # type: ignore[arg-type]
    seen.competitor = lambda: create(one, "/memories/a.md", "from one")
    seen.at = seen.calls + 1  # two refreshes (a read), then appends: one writes in between
    result = two.execute({"command": "create", "path": "/memories/a.md", "text": "from two"})
    assert seen.log[seen.at] == "append"
    assert seen.ran_at == seen.at
    assert result.error is not None
    assert result.error.code == "CONFLICT"
    assert one.state().files["/memories/a.md"].text == "from one"


def test_a_damaged_memory_journal_is_unsafe_storage(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    m = Memory(JsonlJournal(path), scope="a")
    create(m, "/memories/a.md", "x")
    with path.open("ab") as file:
        file.write(b'{"seq":3,')
    result = m.execute({"command": "create", "path": "/memories/b.md", "text": "y"})
    assert result.error is not None
    assert result.error.code == "UNSAFE_STORAGE"


def test_a_journal_of_another_scope_is_refused() -> None:
    journal = InMemoryJournal()
    memory(journal, scope="alice")
    with pytest.raises(ScopeMismatchError):
        memory(journal, scope="bob")


# --- text rules -----------------------------------------------------------------------------------


def test_logical_lines_and_front_matter() -> None:
    assert logical_lines("a\r\nb\rc\n") == ["a", "b", "c"]
    assert logical_lines("") == []
    assert logical_lines("\n") == [""]
    meta = front_matter(
        "---\ndescription: 'my notes'\nread_only: true\nlinks:\n  - /memories/a.md\n---\nbody"
    )
    assert (meta.description, meta.read_only, meta.links) == ("my notes", True, ("/memories/a.md",))
    assert front_matter("---\nno closing line") == front_matter("")
    assert links_of("[a](/memories/a.md) [web](https://x.y)") == {"/memories/a.md"}


# --- the index ------------------------------------------------------------------------------------


def test_the_index_is_bounded_deterministic_and_pinned() -> None:
    m = memory()
    create(m, "/memories/b.md", "---\ndescription: second\n---\n")
    create(m, "/memories/a.md", "plain")
    create(m, "/memories/c.md", "third")
    state = m.state()
    index = render_index(state, limit=2)
    assert index.text.splitlines() == [
        f"Memory index at seq {state.seq} (3 files):",
        "- /memories/a.md (5 bytes)",
        "- /memories/b.md (28 bytes): second",
        "- … and 1 more (view /memories to list them)",
    ]
    assert (index.as_of, index.limit, index.truncated) == (state.seq, 2, 1)
    assert len(index.revisions) == 2
    assert render_index(m.state(), limit=2) == index
    create(m, "/memories/a.md", "changed")
    assert render_index(m.state(), limit=2).sha256 != index.sha256


def test_the_same_pin_renders_the_same_bytes_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    m = Memory(JsonlJournal(path), scope="a")
    create(m, "/memories/a.md", "---\ndescription: ünïcødé\n---\n")
    pin = m.state().seq
    create(m, "/memories/b.md", "later")
    here = load_index(lambda: JsonlJournal(path, readonly=True), pin=pin, policy="require")
    assert not isinstance(here, MemoryUnavailable)
    code = (
        "import sys; from waybook.journal import JsonlJournal;"
        "from waybook.memory.tools._index import load_index;"
        "opener = lambda: JsonlJournal(sys.argv[1], readonly=True);"
        f"print(load_index(opener, pin={pin}, policy='require').sha256)"
    )
    other = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == here.sha256


def test_an_unavailable_memory_journal_needs_an_explicit_policy(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"

    def opener() -> JsonlJournal:
        return JsonlJournal(missing, readonly=True)

    outcome = load_index(opener, policy="continue")
    assert isinstance(outcome, MemoryUnavailable)
    assert "no such journal" in outcome.reason
    with pytest.raises(MemoryRequiredError):
        load_index(opener, policy="require")
