"""Importing LangGraph SqliteSaver threads written by LangGraph itself (fixtures/langgraph/, made by its
generate.py): every checkpoint's messages are the context at that checkpoint's node, and a time-travel
fork is a branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import FIXTURES
from waybook.formats.langgraph._database import LangGraphDatabaseError, read_thread
from waybook.formats.langgraph._import import Checkpoint, import_langgraph
from waybook.journal import InMemoryJournal, verify
from waybook.model import GENESIS, LeafMoved, plain_text
from waybook.projections import TreeProjection, context_at, fold

pytest.importorskip("ormsgpack", reason="reading LangGraph checkpoints needs ormsgpack (waybook[langgraph])")

DB = FIXTURES / "langgraph" / "checkpoints.db"


def load(thread: str) -> tuple[InMemoryJournal, Any, list[Checkpoint]]:
    thread_id, checkpoints = read_thread(DB, thread)
    result = import_langgraph(thread_id, checkpoints)
    journal = InMemoryJournal("langgraph")
    journal.append(list(result.records), expected=GENESIS)
    return journal, result, checkpoints


def ours(message: Any) -> tuple[Any, ...]:
    details = message.record.body.details["langgraph"]
    calls = [c.call_id for c in getattr(message.record.body, "tool_calls", ())]
    return (details["type"], details.get("id"), plain_text(message.content), calls)


def theirs(message: dict[str, Any]) -> tuple[Any, ...]:
    data = message["data"]
    content = data.get("content")
    calls = [c["id"] for c in data.get("tool_calls") or []]
    return (message["type"], data.get("id"), content if isinstance(content, str) else "", calls)


def test_every_checkpoint_node_shows_that_checkpoints_messages() -> None:
    journal, result, checkpoints = load("thread-1")
    assert verify(journal).ok
    tree = fold(TreeProjection(), journal.read())
    for checkpoint in checkpoints:
        shown = [ours(m) for m in context_at(journal, tree, result.ends[checkpoint.id])]
        assert shown == [theirs(m) for m in checkpoint.messages]


def test_a_time_travel_fork_is_a_branch_and_the_journal_resumes_at_the_newest_checkpoint() -> None:
    journal, result, checkpoints = load("thread-1")
    tree = fold(TreeProjection(), journal.read())
    assert len(tree.branches()) == 2
    moves = [r.body for r in journal.read() if isinstance(r.body, LeafMoved)]
    assert any("time-travel fork" in m.reason for m in moves)
    newest = max(checkpoints, key=lambda c: c.id)
    assert tree.leaf_id == result.ends[newest.id]


def test_messages_shared_by_checkpoints_are_written_once() -> None:
    journal, _, checkpoints = load("thread-1")
    kinds = [r.kind for r in journal.read()]
    assert kinds.count("waybook.custom/1") == len(checkpoints)
    prompts = [plain_text(r.body.content) for r in journal.read() if r.kind == "waybook.user/2"]
    assert sorted(prompts) == ["And columns?", "How many rows?", "Thanks, what about headers?"]


def test_a_database_with_several_threads_needs_one_chosen(tmp_path: Path) -> None:
    with pytest.raises(LangGraphDatabaseError, match="choose one with --thread"):
        read_thread(DB, None)
    (tmp_path / "x.db").write_text("not sqlite")
    with pytest.raises(LangGraphDatabaseError):
        read_thread(tmp_path / "x.db", None)
