"""Importing Codex CLI rollouts: the real shared rollout and hand-made rollbacks, compactions and forks.

Each import is held to `replay_history`, which replays a rollout the way Codex itself rebuilds what it
sends to the model (response items in order; a `compacted` line replaces the history; a rollback drops
the last N user turns).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.formats import SHARED_FIXTURES, journal_of, needs_shared
from waybook.formats._foreign import ForeignFormatError
from waybook.formats.codex import context_items, import_codex, replay_history
from waybook.journal import InMemoryJournal, verify
from waybook.model import AssistantMessage, LeafMoved, Reset, ToolResult, UserMessage, plain_text
from waybook.projections import TreeProjection, context_at, fold

FIXTURES = SHARED_FIXTURES / "codex"
REAL = sorted(FIXTURES.glob("rollout-*.jsonl")) if FIXTURES.is_dir() else []
needs_real = needs_shared(REAL)


def load(data: bytes | str) -> InMemoryJournal:
    return journal_of(import_codex(data).records, "codex")


def sent_items(journal: InMemoryJournal) -> list[dict[str, Any]]:
    return context_items(context_at(journal, fold(TreeProjection(), journal.read())))


def texts(journal: InMemoryJournal) -> list[str]:
    return [
        plain_text(r.body.content)
        for r in journal.read()
        if isinstance(r.body, UserMessage | AssistantMessage)
    ]


def rollout(*lines: tuple[str, dict[str, Any]]) -> str:
    meta = ("session_meta", {"id": "s-1", "base_instructions": {"text": "be brief"}})
    stamped = [
        {"timestamp": f"2026-05-11T08:00:{i:02d}.000Z", "type": kind, "payload": payload}
        for i, (kind, payload) in enumerate([meta, *lines])
    ]
    return "\n".join(json.dumps(line) for line in stamped) + "\n"


def user(text: str) -> tuple[str, dict[str, Any]]:
    return (
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def reply(text: str) -> tuple[str, dict[str, Any]]:
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    return ("response_item", item)


def call(call_id: str, arguments: str = '{"cmd": "ls"}') -> tuple[str, dict[str, Any]]:
    item = {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id}
    return ("response_item", item)


def output(call_id: str, text: str) -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "function_call_output", "call_id": call_id, "output": text})


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_a_real_rollout_imports_verifies_and_shows_what_codex_sends(path: Path) -> None:
    data = path.read_bytes()
    journal = load(data)
    assert verify(journal).ok
    assert sent_items(journal) == replay_history(data)  # item for item, every field


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_the_report_accounts_for_every_line_of_a_real_rollout(path: Path) -> None:
    data = path.read_bytes()
    report = import_codex(data).report
    assert report.lines == sum(1 for line in data.splitlines() if line.strip())
    assert report.mapped + report.kept_verbatim + len(report.skipped) == report.lines
    assert report.kept_verbatim > 0  # event_msg and turn_context lines are kept, not dropped


@needs_real
def test_importing_the_same_rollout_twice_gives_the_same_records() -> None:
    data = REAL[0].read_bytes()
    first, second = load(data), load(data)
    assert list(first.read_lines()) == list(second.read_lines())


def test_a_model_turn_becomes_one_assistant_entry_whose_stop_reason_is_inferred_and_recorded() -> None:
    journal = load(rollout(user("list"), call("c1"), output("c1", "a b"), reply("two files")))
    assistants = [r.body for r in journal.read() if isinstance(r.body, AssistantMessage)]
    assert [a.stop_reason for a in assistants] == ["tool_use", "end_turn"]
    assert all(a.details and a.details["codex"]["stop_reason"] == "inferred" for a in assistants)
    result = next(r.body for r in journal.read() if isinstance(r.body, ToolResult))
    assert (result.call_id, result.tool_name) == ("c1", "exec_command")


def test_events_inside_a_turn_are_kept_after_it_and_the_turn_stays_one_entry() -> None:
    token_count = ("event_msg", {"type": "token_count", "info": None})
    journal = load(
        rollout(user("go"), ("response_item", {"type": "reasoning", "summary": []}), token_count, call("c1"))
    )
    kinds = [r.kind for r in journal.read()]
    assert kinds.count("waybook.assistant/1") == 1
    assert kinds[-1] == "waybook.custom/1"


def test_arguments_keep_their_exact_text_even_when_their_keys_are_not_sorted() -> None:
    data = rollout(user("go"), call("c1", '{"b": 1, "a": 2}'), output("c1", "ok"))
    assert sent_items(load(data)) == replay_history(data)


def test_a_rollback_is_a_leaf_move_and_the_dropped_turn_stays_in_the_journal() -> None:
    rollback = ("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
    data = rollout(user("first"), reply("one"), user("second"), reply("two"), rollback, user("third"))
    journal = load(data)
    moves = [r.body for r in journal.read() if isinstance(r.body, LeafMoved)]
    assert len(moves) == 1
    assert "rolled back 1" in (moves[0].reason or "")
    assert sent_items(journal) == replay_history(data)
    assert "second" in texts(journal)


@pytest.mark.parametrize("with_replacement", [True, False])
def test_a_compaction_replaces_what_codex_sends_and_keeps_the_history_before_it(
    with_replacement: bool,
) -> None:
    summary = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary"}]}
    compacted: dict[str, Any] = {"message": "summary"}
    if with_replacement:
        compacted["replacement_history"] = [summary]
    data = rollout(user("first"), reply("one"), ("compacted", compacted), user("after"), reply("ok"))
    journal = load(data)
    assert verify(journal).ok
    assert any(isinstance(r.body, Reset) for r in journal.read())
    assert sent_items(journal) == replay_history(data)
    # the turn before stays in the journal; without a replacement history Codex re-sends its user message
    assert texts(journal).count("first") == (1 if with_replacement else 2)


def test_a_forked_rollout_names_the_session_it_came_from() -> None:
    data = json.dumps(
        {
            "timestamp": "2026-05-11T08:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "s-2", "forked_from_id": "s-1"},
        }
    )
    header = next(iter(load(data + "\n").read())).body
    assert header.metadata["forked_from"] == "s-1"


def test_a_damaged_line_is_reported_with_its_number_and_lenient_skips_and_counts_it() -> None:
    data = (
        rollout(user("a"), reply("b")).replace('"role": "assistant"', '"role": "assistant"', 1)
        + "{not json\n"
    )
    with pytest.raises(ForeignFormatError, match="line 4"):
        import_codex(data)
    imported = import_codex(data, lenient=True)
    assert [n for n, _ in imported.report.skipped] == [4]
    assert imported.report.mapped + imported.report.kept_verbatim + 1 == imported.report.lines


def test_a_file_that_is_not_a_rollout_is_refused() -> None:
    with pytest.raises(ForeignFormatError, match="not a Codex rollout"):
        import_codex('{"type": "message"}\n')
    with pytest.raises(ForeignFormatError, match="not UTF-8"):
        import_codex(b"\xff\xfe\n")


# --- usage (issue 47): each turn carries its request's token counts, dated by its own items ----------------


def token_count(last: dict[str, int] | None, total: dict[str, int] | None) -> tuple[str, dict[str, Any]]:
    info = None if last is None and total is None else {"last_token_usage": last, "total_token_usage": total}
    return ("event_msg", {"type": "token_count", "info": info, "rate_limits": None})


def counts(prompt: int, cached: int, output: int) -> dict[str, int]:
    return {
        "input_tokens": prompt,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "total_tokens": prompt + output,
    }


def test_a_turn_carries_the_token_counts_of_its_request_as_codex_wrote_them() -> None:
    first, second = counts(18_703, 0, 167), counts(18_911, 18_304, 37)
    total = {k: first[k] + second[k] for k in first}
    journal = load(
        rollout(
            user("go"),
            ("event_msg", {"type": "token_count", "info": None}),  # the first event carries no counts
            call("c1"),
            token_count(first, first),
            output("c1", "ok"),
            reply("done"),
            token_count(second, total),
        )
    )
    assert [a.usage for a in bodies_of(journal, AssistantMessage)] == [first, second]


def test_a_token_count_repeated_with_unchanged_totals_is_no_new_request() -> None:
    once = counts(100, 0, 10)
    journal = load(rollout(user("go"), reply("done"), token_count(once, once), token_count(once, once)))
    assert [a.usage for a in bodies_of(journal, AssistantMessage)] == [once]


def test_token_counts_outside_a_model_turn_are_kept_and_reported_not_counted() -> None:
    once = counts(100, 0, 10)
    imported = import_codex(rollout(user("go"), token_count(once, once)))
    assert any("token counts outside a model turn" in note for note in imported.report.inferred)
    assert not bodies_of(journal_of(imported.records, "codex"), AssistantMessage)


def test_a_turn_is_dated_by_its_last_item_not_by_the_line_that_closes_it() -> None:
    """The prompt that closes the turn comes the next day; the turn stays on its own day (stats by day)."""
    lines = [
        {"timestamp": "2026-05-11T23:59:58.000Z", "type": "session_meta", "payload": {"id": "s-1"}},
        {"timestamp": "2026-05-11T23:59:59.000Z", "type": "response_item", "payload": user("go")[1]},
        {"timestamp": "2026-05-11T23:59:59.500Z", "type": "response_item", "payload": reply("done")[1]},
        {"timestamp": "2026-05-11T23:59:59.700Z", "type": "event_msg", "payload": {"type": "task_complete"}},
        {"timestamp": "2026-05-12T09:00:00.000Z", "type": "response_item", "payload": user("again")[1]},
    ]
    journal = load("".join(json.dumps(line) + "\n" for line in lines))
    at = {r.kind: r.at for r in journal.read() if r.kind != "waybook.user/2"}
    assert at["waybook.assistant/1"] == "2026-05-11T23:59:59.500Z"
    assert (
        at["waybook.custom/1"] == "2026-05-11T23:59:59.700Z"
    )  # a line deferred past the turn keeps its time
    assert [r.at for r in journal.read() if r.kind == "waybook.user/2"][-1] == "2026-05-12T09:00:00.000Z"


@needs_real
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:40])
def test_the_turns_usage_adds_up_to_the_rollouts_final_totals(path: Path) -> None:
    data = path.read_bytes()
    totals = [
        line["payload"]["info"]["total_token_usage"]
        for line in map(json.loads, data.splitlines())
        if line["type"] == "event_msg"
        and line["payload"].get("type") == "token_count"
        and line["payload"]["info"]
    ]
    summed: dict[str, int] = {}
    for message in bodies_of(load(data), AssistantMessage):
        for key, value in (message.usage or {}).items():
            summed[key] = summed.get(key, 0) + value
    assert summed == totals[-1]


def bodies_of(journal: InMemoryJournal, kind: type) -> list[Any]:
    return [r.body for r in journal.read() if isinstance(r.body, kind)]
