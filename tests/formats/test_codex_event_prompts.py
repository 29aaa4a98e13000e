"""Issue 44, Codex: a rollout whose prompts exist only as `event_msg` `user_message` lines.

fixtures/codex/event-prompts.jsonl is the shared real rollout without its user `response_item`s (every
other line byte for byte; fixtures/codex/make_event_prompts.py): it imported with no user message at
all, so its context, title and training rows started with the assistant. The prompts are user messages
now, each once, and the rollout's 66 `token_count` events are its turns' usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli_runner import waybook
from tests.helpers.formats import journal_of
from tests.helpers.paths import FIXTURES, SHARED_FIXTURES
from waybook.formats.codex import context_items, import_codex, replay_history
from waybook.journal import InMemoryJournal, verify
from waybook.model import UserMessage, plain_text
from waybook.projections import TreeProjection, context_at, fold

EVENT_PROMPTS = FIXTURES / "codex" / "event-prompts.jsonl"
REAL = SHARED_FIXTURES / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
PROMPTS = ["show tools", "let's update the defailt context compart to 90 in env var"]


def load(data: bytes | str) -> InMemoryJournal:
    return journal_of(import_codex(data).records, "codex")


def user_texts(journal: InMemoryJournal) -> list[str]:
    return [plain_text(r.body.content) for r in journal.read() if isinstance(r.body, UserMessage)]


def prompt(text: str) -> tuple[str, dict[str, Any]]:
    return ("event_msg", {"type": "user_message", "message": text, "images": []})


def user(text: str) -> tuple[str, dict[str, Any]]:
    return (
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
    )


def reply(text: str) -> tuple[str, dict[str, Any]]:
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    return ("response_item", item)


def rollout(*lines: tuple[str, dict[str, Any]]) -> str:
    stamped = [
        {"timestamp": f"2026-05-11T08:00:{i:02d}.000Z", "type": kind, "payload": payload}
        for i, (kind, payload) in enumerate([("session_meta", {"id": "s-1"}), *lines])
    ]
    return "\n".join(json.dumps(line) for line in stamped) + "\n"


def test_prompts_recorded_only_as_events_become_the_user_messages_of_their_turns() -> None:
    journal = load(EVENT_PROMPTS.read_bytes())
    assert verify(journal).ok
    assert user_texts(journal) == PROMPTS
    context = context_at(journal, fold(TreeProjection(), journal.read()))
    roles = [message.role for message in context]
    assert roles[:3] == ["system", "system", "user"]  # the instructions, the developer message, the prompt


def test_the_context_is_what_codex_sends_with_the_event_prompts_in_their_places() -> None:
    data = EVENT_PROMPTS.read_bytes()
    journal = load(data)
    sent = context_items(context_at(journal, fold(TreeProjection(), journal.read())))
    prompts = [item for item in sent if item.get("role") == "user"]
    assert [item["content"][0]["text"] for item in prompts] == PROMPTS
    assert [item for item in sent if item.get("role") != "user"] == replay_history(data)


def test_a_prompt_a_response_item_carries_is_never_imported_twice() -> None:
    journal = load(REAL.read_bytes())
    texts = user_texts(journal)
    assert texts.count("show tools") == 1
    assert texts[1:] == PROMPTS  # after the AGENTS.md instructions Codex injects as a user message
    assert user_texts(load(rollout(prompt("hi"), user("hi"), reply("hello")))) == ["hi"]  # event first
    assert user_texts(load(rollout(user("hi"), prompt("hi"), reply("hello")))) == ["hi"]  # item first
    assert user_texts(load(rollout(prompt("hi"), reply("hello"), prompt("again"), reply("ok")))) == [
        "hi",
        "again",
    ]


def test_the_token_counts_are_the_turns_usage_and_the_prompts_are_the_turns(tmp_path: Path) -> None:
    out = tmp_path / "rollout.jsonl"
    assert waybook("import", "codex", str(EVENT_PROMPTS), "-o", str(out)).returncode == 0
    stats = json.loads(waybook("stats", "--json", str(out)).stdout)
    total = next(iter(stats.values()))["total"]
    assert total["turns"] == 2
    tokens = total["tokens"]["gpt-5.5"]
    assert tokens["input_tokens"] > 0
    assert tokens["output_tokens"] > 0


def test_the_training_rows_start_with_the_prompt(tmp_path: Path) -> None:
    out, rows = tmp_path / "rollout.jsonl", tmp_path / "rows.jsonl"
    assert waybook("import", "codex", str(EVENT_PROMPTS), "-o", str(out)).returncode == 0
    assert waybook("export", "--format", "openai", str(out), "-o", str(rows)).returncode == 0
    (row,) = [json.loads(line) for line in rows.read_text().splitlines()]
    first_user = next(m for m in row["messages"] if m["role"] == "user")
    assert first_user["content"] == "show tools"


def test_the_title_is_the_first_prompt(tmp_path: Path) -> None:
    store = f"file:{tmp_path / 'store'}"
    assert waybook("import", "codex", str(EVENT_PROMPTS), "--store", store, "rollout").returncode == 0
    listed = waybook("ls", "--store", store, "--json")
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)["journals"]
    assert row["title"] == "show tools"
