"""Importing Claude Code transcripts: every shared real transcript, and hand-made streamed turns,
parallel results, edits, compactions and damaged lines.

Each import is held to `replay_context`, which rebuilds from the transcript alone the messages Claude
Code sends when it resumes the session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.claude_code import Transcript
from tests.helpers.formats import SHARED_FIXTURES, journal_of, needs_shared
from waybook.formats._foreign import ForeignFormatError
from waybook.formats.claude_code import import_claude_code, subagent_anchor
from waybook.formats.claude_code._context import api_messages, replay_context
from waybook.journal import InMemoryJournal, verify
from waybook.model import (
    AssistantMessage,
    Compaction,
    CustomEntry,
    LeafMoved,
    SubagentLink,
    ToolResult,
    UserMessage,
)
from waybook.projections import TreeProjection, context_at, fold

FIXTURES = SHARED_FIXTURES / "claude-code"
REAL = sorted(FIXTURES.rglob("*.jsonl")) if FIXTURES.is_dir() else []
needs_real = needs_shared(REAL)
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def load(data: bytes | str) -> InMemoryJournal:
    return journal_of(import_claude_code(data).records, "claude-code")


def sent(journal: InMemoryJournal) -> list[dict[str, Any]]:
    return api_messages(context_at(journal, fold(TreeProjection(), journal.read())))


def bodies(journal: InMemoryJournal, kind: type) -> list[Any]:
    return [r.body for r in journal.read() if isinstance(r.body, kind)]


def tool_use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "ls"}}


def result(call_id: str, text: str = "ok") -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text}]


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_real_transcript_imports_verifies_and_shows_what_claude_code_sends(path: Path) -> None:
    data = path.read_bytes()
    journal = load(data)
    assert verify(journal).ok
    assert sent(journal) == replay_context(data)  # message for message, block for block


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_line_of_a_real_transcript_is_mapped_or_kept(path: Path) -> None:
    data = path.read_bytes()
    report = import_claude_code(data).report
    assert report.lines == sum(1 for line in data.splitlines() if line.strip())
    assert report.mapped + report.kept_verbatim + len(report.skipped) == report.lines
    kept = {json.dumps(e.data, sort_keys=True) for e in bodies(load(data), CustomEntry)}
    for line in data.splitlines():
        value = json.loads(line)
        if value.get("type") in ("progress", "file-history-snapshot", "queue-operation"):
            assert json.dumps(value, sort_keys=True) in kept  # verbatim


@needs_real
def test_importing_a_real_transcript_twice_gives_the_same_journal_bytes() -> None:
    data = (FIXTURES / "spotter" / f"{SESSION}.jsonl").read_bytes()
    assert list(load(data).read_lines()) == list(load(data).read_lines())


@needs_real
def test_the_task_call_that_started_a_sub_agent_links_to_its_journal() -> None:
    journal = load((FIXTURES / "spotter" / f"{SESSION}.jsonl").read_bytes())
    (link,) = bodies(journal, SubagentLink)
    assert link.journal == f"{SESSION}.agent-a881341"
    spawner = next(r.body for r in journal.read() if r.id == link.node)
    assert link.call_id in [c.call_id for c in spawner.tool_calls]


@needs_real
def test_a_compaction_summarizer_beside_the_session_hangs_from_the_line_it_continues() -> None:
    session = (FIXTURES / "spotter" / f"{SESSION}.jsonl").read_bytes()
    agent = (FIXTURES / "spotter" / SESSION / "subagents" / "agent-acompact-fffbd0.jsonl").read_bytes()
    anchor = subagent_anchor(session, agent)
    assert anchor is not None
    assert "continues" in anchor.reason


@needs_real
def test_a_real_compaction_becomes_one_compaction_shown_as_claude_code_wrote_it() -> None:
    journal = load((FIXTURES / "spotter" / f"{SESSION}.jsonl").read_bytes())
    (compaction,) = bodies(journal, Compaction)
    assert not compaction.preamble
    assert compaction.summary.startswith("This session is being continued")
    assert sent(journal)[0]["content"][0]["text"] == compaction.summary


def test_a_streamed_turn_becomes_one_assistant_entry_and_its_stop_reason_is_inferred() -> None:
    t = Transcript()
    t.user("list files")
    t.assistant("msg_1", {"type": "thinking", "thinking": "hm", "signature": "s"})
    t.assistant("msg_1", {"type": "text", "text": "Let me look."})
    t.assistant("msg_1", tool_use("c1"))
    t.user(result("c1"))
    t.assistant("msg_2", {"type": "text", "text": "Two files."}, stop="end_turn")
    journal = load(t.text())
    first, second = bodies(journal, AssistantMessage)
    assert [type(b).__name__ for b in first.content] == ["ThinkingBlock", "TextBlock", "ToolCallBlock"]
    assert (first.stop_reason, first.details["claude_code"]["stop_reason"]) == ("tool_use", "inferred")
    assert (second.stop_reason, second.details["claude_code"]["stop_reason"]) == ("end_turn", "recorded")
    assert sent(journal) == replay_context(t.text())


def test_parallel_tool_results_chain_after_their_call_and_make_no_false_branch() -> None:
    t = Transcript()
    t.user("go")
    first = t.assistant("msg_1", tool_use("c1"))
    second = t.assistant("msg_1", tool_use("c2"))
    t.user(result("c1"), parent=first)  # Claude Code hangs each result from its own call's line
    t.user(result("c2"), parent=second)
    t.user("thanks")
    journal = load(t.text())
    assert bodies(journal, LeafMoved) == []
    results = bodies(journal, ToolResult)
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert results[1].parent == next(r.id for r in journal.read() if r.body == results[0])
    assert sent(journal) == replay_context(t.text())


def test_an_edited_prompt_is_an_explicit_leaf_move_whose_reason_says_it_was_inferred() -> None:
    t = Transcript()
    first = t.user("first try")
    t.assistant("msg_1", {"type": "text", "text": "one"}, stop="end_turn")
    t.user("edited", parent=None)
    t.lines[-1]["parentUuid"] = t.lines[0]["parentUuid"]  # a sibling of the first prompt: a new root
    t.user("continue", parent=first)  # back on the first branch
    journal = load(t.text())
    moves = bodies(journal, LeafMoved)
    assert moves
    assert all("inferred" in move.reason for move in moves)
    assert verify(journal).ok
    assert sent(journal) == replay_context(t.text())


def test_side_lines_are_kept_out_of_the_context_and_make_no_false_branch() -> None:
    t = Transcript()
    t.lines.append({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    t.add("progress", None, data={"type": "hook_progress"})
    t.user("hi")
    t.add("system", subtype="turn_duration", durationMs=5)
    t.assistant("msg_1", {"type": "text", "text": "hello"}, stop="end_turn")
    journal = load(t.text())
    assert bodies(journal, LeafMoved) == []
    assert len(bodies(journal, CustomEntry)) == 3
    assert [m["role"] for m in sent(journal)] == ["user", "assistant"]


def test_a_compact_boundary_and_its_summary_become_one_compaction() -> None:
    t = Transcript()
    t.user("old work")
    last = t.assistant("msg_1", {"type": "text", "text": "done"}, stop="end_turn")
    t.add(
        "system", None, subtype="compact_boundary", logicalParentUuid=last, compactMetadata={"preTokens": 9}
    )
    t.user("This session is being continued. Summary: old work done.", isCompactSummary=True)
    t.user("next task")
    journal = load(t.text())
    (compaction,) = bodies(journal, Compaction)
    assert (compaction.tokens_before, compaction.preamble) == (9, False)
    assert sent(journal) == replay_context(t.text())
    assert sent(journal)[0]["content"][0]["text"].startswith("This session is being continued")


def test_a_damaged_line_is_reported_with_its_number_and_lenient_skips_and_counts_it() -> None:
    t = Transcript()
    t.user("hi")
    data = t.text() + "{broken\n"
    with pytest.raises(ForeignFormatError, match="line 2"):
        import_claude_code(data)
    report = import_claude_code(data, lenient=True).report
    assert [n for n, _ in report.skipped] == [2]
    assert report.mapped + report.kept_verbatim + 1 == report.lines


def test_a_file_with_no_messages_is_not_a_transcript() -> None:
    with pytest.raises(ForeignFormatError, match="not a Claude Code transcript"):
        import_claude_code('{"type": "summary", "summary": "x"}\n')


# --- usage (issue 47): the hour-long cache writes kept apart, each turn dated by its own lines ------------


def streamed(t: Transcript, message_id: str, usage: dict[str, Any], *, parts: int = 2) -> None:
    """A message streamed as Claude Code writes it: the usage on every line, the output growing."""
    for n in range(parts):
        message = {
            "id": message_id,
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": f"part {n}"}],
            "stop_reason": "end_turn" if n == parts - 1 else None,
            "usage": usage | {"output_tokens": usage["output_tokens"] if n == parts - 1 else 1},
        }
        t.add("assistant", message=message, requestId="req_1")


def test_a_turns_usage_is_its_last_lines_with_the_hour_long_cache_writes_kept_apart() -> None:
    t = Transcript()
    t.user("hi")
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 8_037,
        "cache_read_input_tokens": 12_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 37, "ephemeral_1h_input_tokens": 8_000},
        "output_tokens": 441,
        "server_tool_use": {"web_search_requests": 0},
        "service_tier": "standard",
    }
    streamed(t, "msg_1", usage, parts=3)
    (turn,) = bodies(load(t.text()), AssistantMessage)
    assert turn.usage == {
        "input_tokens": 3,
        "cache_creation_input_tokens": 8_037,
        "cache_read_input_tokens": 12_000,
        "cache_creation.ephemeral_5m_input_tokens": 37,
        "cache_creation.ephemeral_1h_input_tokens": 8_000,
        "output_tokens": 441,
    }


@needs_real
def test_every_real_turn_keeps_the_split_of_its_cache_writes() -> None:
    data = (FIXTURES / "spotter" / f"{SESSION}.jsonl").read_bytes()
    turns = [t for t in bodies(load(data), AssistantMessage) if t.usage]
    assert turns
    for turn in turns:
        usage = turn.usage
        assert usage is not None
        split = (
            usage["cache_creation.ephemeral_5m_input_tokens"]
            + usage["cache_creation.ephemeral_1h_input_tokens"]
        )
        assert split == usage["cache_creation_input_tokens"]
    assert sum(t.usage["cache_creation.ephemeral_1h_input_tokens"] for t in turns if t.usage) > 0


def test_a_turn_is_dated_by_its_own_last_line_not_by_the_line_after_it() -> None:
    """The next prompt comes the next day; the turn stays on its own day (stats by day, ccusage's days)."""
    t = Transcript()
    t.user("hi")
    streamed(t, "msg_1", {"input_tokens": 3, "output_tokens": 9})
    t.user("again")
    t.lines[-1]["timestamp"] = "2026-02-11T09:00:00.000Z"
    journal = load(t.text())
    (turn,) = [r for r in journal.read() if isinstance(r.body, AssistantMessage)]
    assert turn.at == t.lines[2]["timestamp"] == "2026-02-10T21:00:02.000Z"
    assert [r.at for r in journal.read() if isinstance(r.body, UserMessage)][-1] == "2026-02-11T09:00:00.000Z"
