"""The high-level writer: one Session per conversation writer."""

from __future__ import annotations

import pytest

from waybook import InMemoryJournal, Session, StaleWriterError, utc_now, verify
from waybook.journal._roles.session import TIMESTAMP_PATTERN
from waybook.model import (
    SEALED_SCHEMA,
    AssistantMessage,
    Header,
    InvalidArgumentError,
    InvalidRecordError,
    LeafMoved,
    ParentMismatchError,
    SubagentLink,
    ToolCallBlock,
    ToolResult,
    UnknownNodeError,
    UserMessage,
)


def test_create_writes_the_header_once() -> None:
    journal = InMemoryJournal()
    Session.create(journal, journal_id="s1", metadata={"cwd": "/w"})
    Session.create(journal, journal_id="ignored")
    (only,) = list(journal.read())
    assert only.body == Header(journal="s1", creator="waybook", metadata={"cwd": "/w"}, schema=SEALED_SCHEMA)


def test_each_entry_extends_the_leaf_and_becomes_it() -> None:
    session = Session.create(InMemoryJournal())
    question = session.user("list the files")
    call = ToolCallBlock(call_id="c1", name="ls", arguments={"path": "."})
    answer = session.assistant(["Looking.", call][1:], stop_reason="tool_use")
    result = session.tool_result("c1", "a.txt\nb.txt", tool_name="ls")
    assert isinstance(answer.body, AssistantMessage)
    assert answer.body.parent == question.id
    assert answer.body.tool_calls == (call,)
    assert isinstance(result.body, ToolResult)
    assert result.body.parent == answer.id
    assert session.leaf == result.id
    assert verify(session.journal).ok


def test_branch_from_moves_the_leaf_and_new_entries_grow_from_there() -> None:
    session = Session.create(InMemoryJournal(), actor="user")
    first = session.user("hi")
    session.assistant("a bad answer")
    move = session.branch_from(first.id, reason="regenerate")
    retry = session.assistant("a better answer")
    assert move.body == LeafMoved(
        from_leaf=move.body.from_leaf, to_leaf=first.id, reason="regenerate", actor="user"
    )  # type: ignore[union-attr]
    assert retry.body.parent == first.id  # type: ignore[union-attr]


def test_reset_starts_a_new_root() -> None:
    session = Session.create(InMemoryJournal())
    session.user("one topic")
    session.reset(reason="new task")
    assert session.leaf is None
    assert session.user("another").body.parent is None  # type: ignore[union-attr]


def test_a_stale_session_raises_and_is_usable_after_sync() -> None:
    journal = InMemoryJournal()
    alice = Session.create(journal)
    bob = Session(journal)
    alice.user("from alice")
    with pytest.raises(StaleWriterError):
        bob.user("from bob")
    assert bob.sync() == 1
    entry = bob.assistant("bob answers alice")
    assert isinstance(entry.body, AssistantMessage)
    assert alice.sync() == 1
    assert alice.leaf == entry.id


def test_a_batch_is_atomic_and_needs_explicit_parents() -> None:
    session = Session.create(InMemoryJournal())
    head = session.head
    with pytest.raises(ParentMismatchError):
        session.append(UserMessage(parent=None, content=()), UserMessage(parent=None, content=()))
    assert session.head == head == session.journal.head()


def test_timestamps_are_rfc3339_utc() -> None:
    assert TIMESTAMP_PATTERN.fullmatch(utc_now())


def test_a_journal_declares_its_role_in_the_header_and_an_unknown_role_is_refused() -> None:
    journal = InMemoryJournal("roles")
    Session.create(journal, journal_id="roles", role="canonical_memory")
    assert next(iter(journal.read())).body.role == "canonical_memory"
    with pytest.raises(InvalidRecordError, match="role is one of"):
        Session.create(InMemoryJournal("bad"), journal_id="bad", role="bogus")


def test_a_sub_agent_link_hangs_from_a_known_node_and_does_not_move_the_leaf() -> None:
    journal = InMemoryJournal("links")
    session = Session.create(journal, journal_id="links")
    session.user("research hooks")
    call = ToolCallBlock(call_id="toolu_1", name="Task", arguments={"prompt": "find the hook contract"})
    spawner = session.assistant([call], stop_reason="tool_use")
    link = session.link_subagent("agent-a881341", call_id="toolu_1", agent="Explore")
    assert link.body == SubagentLink(
        node=spawner.id, journal="agent-a881341", call_id="toolu_1", agent="Explore"
    )
    assert session.leaf == spawner.id
    with pytest.raises(UnknownNodeError, match="not a node"):
        session.link_subagent("agent-x", at="nowhere")


def test_branch_from_a_record_instead_of_its_id_says_to_pass_the_id_and_writes_nothing() -> None:
    journal = InMemoryJournal("s")
    session = Session.create(journal)
    record = session.user("hi")
    with pytest.raises(InvalidArgumentError, match=r"not Record: pass record.id") as raised:
        session.branch_from(record, reason="again")  # type: ignore[arg-type]
    assert "hi" not in str(raised.value)  # the message names the mistake, not the record's content
    assert journal.head().seq == 2
