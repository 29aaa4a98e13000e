"""`Session.turn`: one assistant message and the results of its tool calls, as one atomic batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.faults import CountingFileOps
from tests.helpers.paths import DOCS
from waybook import InMemoryJournal, JsonlJournal, Session, ToolOutcome, verify
from waybook.model import (
    AssistantMessage,
    InvalidRecordError,
    TextBlock,
    ToolCallBlock,
    ToolPairingError,
    ToolResult,
)
from waybook.projections import ContextProjection, context_at, replay

LS = ToolCallBlock(call_id="c1", name="ls", arguments={"path": "."})
CAT = ToolCallBlock(call_id="c2", name="cat", arguments={"path": "a.txt"})


def test_a_turn_appends_the_message_then_each_result_chained_to_the_one_before() -> None:
    session = Session.create(InMemoryJournal())
    question = session.user("what is in a.txt?")
    result = session.turn(
        [TextBlock(text="Looking."), LS, CAT],
        [ToolOutcome("c2", "hello"), ToolOutcome("c1", "a.txt", details={"ms": 3})],
        model="m1",
    )
    message, second, first = result.records
    assert isinstance(message.body, AssistantMessage)
    assert message.body.parent == question.id
    assert message.body.stop_reason == "tool_use"
    assert message.body.model == "m1"
    assert isinstance(second.body, ToolResult)
    assert isinstance(first.body, ToolResult)
    assert (second.body.parent, second.body.call_id, second.body.tool_name) == (message.id, "c2", "cat")
    assert (first.body.parent, first.body.call_id, first.body.details) == (second.id, "c1", {"ms": 3})
    assert session.leaf == first.id
    assert result.prior.seq + 3 == result.head.seq == session.head.seq
    assert verify(session.journal).ok


def test_a_turn_without_tool_calls_is_one_message_that_ends_the_turn() -> None:
    session = Session.create(InMemoryJournal())
    session.user("hi")
    (message,) = session.turn("hello").records
    assert isinstance(message.body, AssistantMessage)
    assert message.body.stop_reason == "end_turn"


def test_a_turn_is_what_the_model_context_shows_in_order() -> None:
    session = Session.create(InMemoryJournal())
    session.user("list")
    session.turn([LS], [ToolOutcome("c1", "a.txt", is_error=True, tool_name="shell")])
    state = replay(ContextProjection(), session.journal)
    roles = [(m.role, m.record.kind) for m in context_at(session.journal, state.tree)]
    assert roles == [
        ("user", "waybook.user/2"),
        ("assistant", "waybook.assistant/1"),
        ("tool", "waybook.tool_result/1"),
    ]


@pytest.mark.parametrize(
    ("content", "results", "match"),
    [
        ([LS], [ToolOutcome("c9", "x")], "'c9', which is not a tool call"),
        ([LS], [ToolOutcome("c1", "x"), ToolOutcome("c1", "y")], "'c1' has two results"),
        ([LS, CAT], [ToolOutcome("c1", "x")], r"\['c2'\] have no result"),
        ([LS, LS], [ToolOutcome("c1", "x")], "two tool calls with the same id"),
        ("no calls", [ToolOutcome("c1", "x")], "not a tool call"),
        ([LS], [("c1", "x")], "ToolOutcome values"),
    ],
)
def test_results_that_do_not_answer_the_calls_one_for_one_are_refused_and_nothing_is_written(
    content: object, results: object, match: str
) -> None:
    session = Session.create(InMemoryJournal())
    session.user("go")
    head = session.head
    with pytest.raises(ToolPairingError, match=match):
        session.turn(content, results)  # type: ignore[arg-type]
    assert session.head == head == session.journal.head()


def test_a_turn_that_breaks_a_record_rule_writes_none_of_it() -> None:
    session = Session.create(InMemoryJournal())
    head = session.head
    with pytest.raises(InvalidRecordError):
        session.turn([LS], [ToolOutcome("c1", "x", details={"bad": object()})])
    assert session.journal.head() == head


def test_a_turn_is_one_write_and_under_fsync_one_fsync(tmp_path: Path) -> None:
    ops = CountingFileOps()
    with JsonlJournal(tmp_path / "s.jsonl", durability="fsync", file_ops=ops) as journal:
        session = Session.create(journal)
        session.user("go")
        writes, fsyncs = ops.writes, ops.fsyncs
        session.turn([LS, CAT], [ToolOutcome("c1", "a"), ToolOutcome("c2", "b")])
        assert (ops.writes - writes, ops.fsyncs - fsyncs) == (1, 1)
    with JsonlJournal(tmp_path / "s.jsonl", create=False) as journal:
        assert [r.kind for r in journal.read(after=2)] == [
            "waybook.assistant/1",
            *["waybook.tool_result/1"] * 2,
        ]


def test_the_session_docs_example_runs() -> None:
    import re
    import subprocess
    import sys

    doc = (DOCS / "session.md").read_text()
    outputs = []
    for block in re.findall(r"```python\n(.*?)```", doc, flags=re.S):
        run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, check=True)
        outputs.append(run.stdout)
    assert outputs == ["True 5\n", "['user', 'assistant']\n", "source 2 True\n", "True 2\nTrue 2\n"]


def test_a_turn_whose_content_is_not_content_is_refused_typed() -> None:
    journal = InMemoryJournal("turn-types")
    session = Session.create(journal, journal_id="turn-types")
    head = journal.head()
    with pytest.raises(InvalidRecordError, match="content blocks"):
        session.turn(42)  # type: ignore[arg-type]
    assert journal.head() == head


def test_a_refused_turn_stores_no_blob_either() -> None:
    from waybook.stores import open_store

    with open_store("memory:") as store:
        session = Session.create(store.create("t"), blobs=store.blobs)
        session.user("go")
        huge = TextBlock(text="x" * 300_000)  # over the inline limit: it would become a blob
        with pytest.raises(ToolPairingError):
            session.turn([huge, LS], [])
        assert list(store.blobs.digests()) == []
