"""A session journal as OpenTelemetry GenAI spans, checked as the SDK's in-memory span exporter gets them."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.trace import SpanKind, StatusCode

from tests.helpers.otel import MODEL, by_name, coding_session, demo_session, exported
from tests.helpers.paths import SHARED_FIXTURES
from waybook._session import Session
from waybook.export import otel
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.model import ToolCallBlock
from waybook.projections import session_stats


def _ns(at: str) -> int:
    moment = datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(UTC)
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def _session() -> InMemoryJournal:
    journal = InMemoryJournal("otel-session")
    coding_session(journal)
    return journal


def test_a_model_call_is_a_chat_span_with_the_conventions_attributes_and_the_records_times() -> None:
    journal = _session()
    records = {r.id: r for r in journal.read()}
    _, spans = exported(journal)
    first = by_name(spans, "chat")[0]
    assert first.name == f"chat {MODEL}"
    assert first.kind is SpanKind.CLIENT
    attributes = first.attributes or {}
    assert attributes[gen_ai.GEN_AI_OPERATION_NAME] == "chat"
    assert attributes[gen_ai.GEN_AI_REQUEST_MODEL] == attributes[gen_ai.GEN_AI_RESPONSE_MODEL] == MODEL
    assert attributes[gen_ai.GEN_AI_PROVIDER_NAME] == "anthropic"
    assert attributes[gen_ai.GEN_AI_CONVERSATION_ID] == "otel-session"
    assert attributes[gen_ai.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_use",)
    # The conventions' input count includes the cache (Anthropic's input_tokens does not).
    assert attributes[gen_ai.GEN_AI_USAGE_INPUT_TOKENS] == 3 + 1000 + 200
    assert attributes[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS] == 40
    assert attributes[gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1000
    assert attributes[gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 200
    assert attributes["waybook.usage.input_tokens"] == 3
    assert attributes["waybook.record.digest"] == records["n03"].digest
    # From the message it answered (the user's) to the reply, by the records' clocks.
    assert (first.start_time, first.end_time) == (_ns(records["n02"].at), _ns(records["n03"].at))
    turn = by_name(spans, "invoke_agent")[0]
    assert first.parent is not None
    assert first.parent.span_id == turn.context.span_id


def test_a_tool_call_is_an_execute_tool_span_from_its_call_to_its_result_a_failed_one_an_error() -> None:
    journal = _session()
    records = {r.id: r for r in journal.read()}
    _, spans = exported(journal)
    failed, worked = by_name(spans, "execute_tool")
    assert (failed.name, worked.name) == ("execute_tool bash", "execute_tool read")
    assert failed.kind is SpanKind.INTERNAL
    attributes = failed.attributes or {}
    assert attributes[gen_ai.GEN_AI_OPERATION_NAME] == "execute_tool"
    assert attributes[gen_ai.GEN_AI_TOOL_NAME] == "bash"
    assert attributes[gen_ai.GEN_AI_TOOL_CALL_ID] == "c1"
    assert attributes["error.type"] == "tool_error"
    assert failed.status.status_code is StatusCode.ERROR
    assert worked.status.status_code is StatusCode.UNSET
    assert (failed.start_time, failed.end_time) == (_ns(records["n03"].at), _ns(records["n04"].at))


def test_each_user_turn_is_a_trace_and_a_session_trace_has_one_root_with_the_turns_below_it() -> None:
    journal = _session()
    report, spans = exported(journal)
    assert report.journals[0].traces == 2
    roots = [span for span in spans if span.parent is None]
    assert [span.name for span in roots] == ["invoke_agent waybook", "invoke_agent waybook"]
    report, spans = exported(journal, options=otel.OtelOptions(traces="session"))
    assert report.journals[0].traces == 1
    (root,) = [span for span in spans if span.parent is None]
    turns = [span for span in spans if span.parent and span.parent.span_id == root.context.span_id]
    assert len(turns) == 2
    assert len(spans) == 1 + 2 + 4 + 2  # the session, two turns, four model calls, two tool calls


def test_ids_are_derived_from_the_journal_so_sending_twice_sends_the_same_ids() -> None:
    journal = _session()
    records = {r.id: r for r in journal.read()}
    _, first = exported(journal)
    _, again = exported(journal)
    assert [(s.context.trace_id, s.context.span_id) for s in first] == [
        (s.context.trace_id, s.context.span_id) for s in again
    ]
    turn = by_name(first, "invoke_agent")[0]
    expected = "\x1f".join(("waybook.otel/1", "trace", "turn", "otel-session", records["n02"].digest))
    assert turn.context.trace_id == int.from_bytes(hashlib.sha256(expected.encode()).digest()[:16], "big")


def test_since_sends_what_is_new_and_two_sends_make_the_whole_journal() -> None:
    journal = _session()
    records = list(journal.read())
    cut = 6  # after the second tool call is made, before its result
    earlier = InMemoryJournal("otel-session")
    coding_session(earlier)
    _, whole = exported(journal)
    _, new = exported(journal, since=cut)
    prefix = [r for r in records if r.seq <= cut]
    _, old = exported(_replayed(prefix))
    whole_ids = {s.context.span_id for s in whole}
    assert {s.context.span_id for s in old} | {s.context.span_id for s in new} == whole_ids
    assert all(
        (s.attributes or {}).get("waybook.record.seq", 0) > cut or s.name.startswith("execute_tool")
        for s in new
    )
    # The call pending at the cut is sent again, answered, with the same id (a backend keeps one).
    pending = [s for s in old if (s.attributes or {}).get("waybook.tool.answered") is False]
    assert [s.context.span_id for s in pending] == [
        s.context.span_id for s in new if s.name == "execute_tool read"
    ]


def _replayed(records: list) -> InMemoryJournal:  # type: ignore[type-arg]
    from waybook.model import Head, NewRecord

    journal = InMemoryJournal("otel-session")
    for record in records:
        again = NewRecord(id=record.id, at=record.at, body=record.body, salt=record.salt)  # verbatim
        journal.append([again], expected=journal.head())
    assert journal.head() == Head(records[-1].seq, records[-1].digest)
    return journal


def test_branches_are_attributes_naming_the_leaf_abandoned_or_active_and_why(tmp_path: Path) -> None:
    path = demo_session(tmp_path)
    with JsonlJournal(path, readonly=True) as journal:
        leaf = Session(journal).leaf
        _, spans = exported(journal)
    states = {(s.attributes or {})["waybook.branch.state"] for s in spans if s.parent is not None}
    assert states == {"active", "abandoned"}
    abandoned = [s for s in spans if (s.attributes or {}).get("waybook.branch.state") == "abandoned"]
    assert {(s.attributes or {})["waybook.branch.reason"] for s in abandoned} == {
        "rejected: the fix changed a public signature"
    }
    active = [s for s in spans if (s.attributes or {}).get("waybook.branch.state") == "active"]
    assert {(s.attributes or {})["waybook.branch.leaf"] for s in active} == {leaf}


def test_memory_receipts_and_the_journals_head_digest_are_attributes(tmp_path: Path) -> None:
    path = demo_session(tmp_path)
    with JsonlJournal(path, readonly=True) as journal:
        head = journal.head()
    with JsonlJournal(tmp_path / "memory.jsonl", readonly=True) as memory:
        memory_head = memory.head()
    with JsonlJournal(path, readonly=True) as journal:
        _, spans = exported(journal)
    (note,) = by_name(spans, "execute_tool memory")
    attributes = note.attributes or {}
    assert attributes["waybook.memory.receipt.seq"] == memory_head.seq
    assert attributes["waybook.memory.receipt.digest"] == memory_head.digest
    for root in (s for s in spans if s.parent is None):
        assert (root.attributes or {})["waybook.head.digest"] == head.digest
        assert (root.attributes or {})["waybook.head.seq"] == head.seq


def test_a_sub_agent_journal_is_a_child_of_the_tool_call_that_started_it(tmp_path: Path) -> None:
    with JsonlJournal(tmp_path / "main.jsonl") as journal:
        session = coding_session(journal, journal_id="main")
        session.user("Ask a helper.")
        task = ToolCallBlock(call_id="task-1", name="Task", arguments={"prompt": "look"})
        session.assistant([task], stop_reason="tool_use")
        session.link_subagent("main.agent-1", call_id="task-1", agent="helper")
        session.tool_result("task-1", "done")
    with JsonlJournal(tmp_path / "main.agent-1.jsonl") as journal:
        coding_session(journal, journal_id="main.agent-1")
    with JsonlJournal(tmp_path / "main.jsonl", readonly=True) as journal:
        report, spans = exported(journal)
    assert report.journals[0].subagents == ("main.agent-1",)
    (task,) = by_name(spans, "execute_tool Task")
    helper, *turns = by_name(spans, "invoke_agent helper")  # its session span, then its two turns
    assert len(turns) == 2
    assert helper.parent is not None
    assert (helper.context.trace_id, helper.parent.span_id) == (task.context.trace_id, task.context.span_id)
    inside = [s for s in spans if (s.attributes or {}).get(gen_ai.GEN_AI_CONVERSATION_ID) == "main.agent-1"]
    assert len(inside) == 1 + 2 + 4 + 2  # its own session span, turns, model calls, tool calls
    assert {s.context.trace_id for s in inside} == {task.context.trace_id}


def test_a_linked_journal_that_is_not_there_is_reported_and_the_rest_is_sent(tmp_path: Path) -> None:
    with JsonlJournal(tmp_path / "main.jsonl") as journal:
        session = coding_session(journal, journal_id="main")
        session.link_subagent("main.gone")
    with JsonlJournal(tmp_path / "main.jsonl", readonly=True) as journal:
        report, spans = exported(journal)
    assert report.journals[0].missing == ("main.gone",)
    assert len(spans) == 2 + 4 + 2


def test_content_is_off_by_default_metadata_has_no_words_and_full_content_is_redacted() -> None:
    journal = _session()
    _, spans = exported(journal)
    every = json.dumps([dict(s.attributes or {}) for s in spans])
    assert "pytest" not in every
    assert "Why do the tests fail" not in every
    assert "gen_ai.input.messages" not in every
    _, spans = exported(journal, options=otel.OtelOptions(content="metadata"))
    every = json.dumps([dict(s.attributes or {}) for s in spans])
    assert "pytest" not in every
    assert "sk_test" not in every
    (failed, _) = by_name(spans, "execute_tool")
    assert (failed.attributes or {})["waybook.tool.arguments.keys"] == ("cmd",)
    report, spans = exported(journal, options=otel.OtelOptions(content="full", redact_patterns=("test_vat",)))
    (failed, _) = by_name(spans, "execute_tool")
    result = str((failed.attributes or {})[gen_ai.GEN_AI_TOOL_CALL_RESULT])
    assert "sk_test_4eC39" not in result
    assert "[REDACTED:stripe-key]" in result
    assert "[REDACTED:custom]" in result
    # The result is on its tool span and in the input of the model call that read it: masked in both.
    assert report.redacted == {"custom": 2, "stripe-key": 2}
    arguments = json.loads(str((failed.attributes or {})[gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS]))
    assert arguments == {"cmd": "pytest -x"}


def test_full_content_is_the_conventions_message_schema_with_the_inputs_since_the_previous_call() -> None:
    journal = _session()
    _, spans = exported(journal, options=otel.OtelOptions(content="full"))
    first, second = by_name(spans, "chat")[:2]
    inputs = json.loads(str((first.attributes or {})[gen_ai.GEN_AI_INPUT_MESSAGES]))
    assert inputs == [
        {"role": "system", "parts": [{"type": "text", "content": "You are a coding agent."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Why do the tests fail?"}]},
    ]
    outputs = json.loads(str((first.attributes or {})[gen_ai.GEN_AI_OUTPUT_MESSAGES]))
    assert outputs == [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c1", "name": "bash", "arguments": {"cmd": "pytest -x"}}],
            "finish_reason": "tool_use",
        }
    ]
    (answered,) = json.loads(str((second.attributes or {})[gen_ai.GEN_AI_INPUT_MESSAGES]))
    assert answered["role"] == "tool"
    assert answered["parts"][0]["type"] == "tool_call_response"
    assert answered["parts"][0]["id"] == "c1"


def test_a_bad_option_is_refused_by_name_before_anything_is_read() -> None:
    with pytest.raises(otel.OtelOptionError, match="content 'all'"):
        otel.OtelOptions(content="all")  # type: ignore[arg-type]
    with pytest.raises(otel.OtelOptionError, match="traces 'day'"):
        otel.OtelOptions(traces="day")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a regular expression"):
        otel.OtelOptions(redact_patterns=("(",))
    with pytest.raises(otel.OtelOptionError, match="http"):
        otel.send(_session(), endpoint="ftp://example.com")
    with pytest.raises(otel.OtelOptionError, match="ends at seq 10"):
        otel.spans_of(_session(), since=11)
    with pytest.raises(otel.OtelOptionError, match="is a working_memory journal"):
        otel.spans_of(_working_memory())
    with pytest.raises(otel.OtelOptionError, match="has no header"):
        otel.spans_of(InMemoryJournal("empty"))


def _working_memory() -> InMemoryJournal:
    from waybook.memory import Memory

    journal = InMemoryJournal("memory")
    Memory(journal, scope="agent").execute({"command": "create", "path": "/memories/a.md", "text": "a"})
    return journal


@pytest.mark.skipif(not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout")
def test_a_real_claude_code_session_sends_what_waybook_stats_counts(tmp_path: Path) -> None:
    from tests.helpers.cli_runner import waybook
    from waybook.stores import open_store

    session = "258c7280-ae70-4798-800f-63464d01a85d"
    folder = SHARED_FIXTURES / "claude-code" / "spotter"
    store = f"file:{tmp_path / 'store'}"
    assert waybook("import", "claude-code", folder, "--store", store).returncode == 0
    with open_store(store) as opened:
        ids = [session, f"{session}.agent-a881341", f"{session}.agent-acompact-fffbd0"]
        stats = {}
        for journal_id in ids:
            with opened.open(journal_id) as journal:
                stats[journal_id] = session_stats(list(journal.read())).total
        with opened.open(session) as journal:
            report, spans = exported(journal, store=opened)
    # in link order: the compaction's summarizer is linked after the compaction, before the Task's agent
    assert report.journals[0].subagents == (ids[2], ids[1])
    expected = sum(t.turns + t.replies + sum(t.tool_calls.values()) for t in stats.values()) + 2
    assert len(spans) == expected
    for journal_id, tally in stats.items():
        mine = [s for s in spans if (s.attributes or {}).get(gen_ai.GEN_AI_CONVERSATION_ID) == journal_id]
        tools: Counter[str] = Counter()
        tokens: dict[str, Counter[str]] = {}
        for span in mine:
            attributes = span.attributes or {}
            if span.name.startswith("execute_tool"):
                tools[str(attributes[gen_ai.GEN_AI_TOOL_NAME])] += 1
            if span.name.startswith("chat"):
                counts = tokens.setdefault(str(attributes[gen_ai.GEN_AI_REQUEST_MODEL]), Counter())
                for key, value in attributes.items():
                    if key.startswith("waybook.usage.") and isinstance(value, int):
                        counts[key.removeprefix("waybook.usage.")] += value
        assert dict(tools) == dict(tally.tool_calls)
        assert {m: dict(c) for m, c in tokens.items()} == {m: dict(c) for m, c in tally.tokens.items()}


def test_the_memory_a_prompt_carried_is_on_the_model_call_that_follows_it() -> None:
    from waybook.model import MemoryUsed

    journal = InMemoryJournal("otel-session")
    session = coding_session(journal)
    session.user("Again, with memory.")
    session.append(MemoryUsed(memory="agent-memory", seq=7, digest="d" * 64, index_sha256="a" * 64))
    session.assistant("Remembered.", model=MODEL)
    _, spans = exported(journal)
    *earlier, last = by_name(spans, "chat")
    attributes = last.attributes or {}
    assert attributes["waybook.memory.used.journal"] == "agent-memory"
    assert attributes["waybook.memory.used.seq"] == 7
    assert attributes["waybook.memory.used.sha256"] == "a" * 64
    assert not any("waybook.memory.used.seq" in (s.attributes or {}) for s in earlier)
