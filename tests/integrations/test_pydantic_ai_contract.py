"""Pydantic AI's message-history contract, run on its documented way to keep a history and on waybook's.

Pydantic AI ships no storage tests; its docs ("Messages and chat history": storing and loading messages)
say a history is kept by dumping `result.all_messages()` with `ModelMessagesTypeAdapter` and passing the
loaded list back as `message_history=`. `JsonFileHistory` below is exactly that, the reference; every test
here passes on it first, then on `WaybookMessageHistory` (a directory store, opened again for each
history object, as a restarted process would).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.integrations.runtime_checks import IMPLEMENTATIONS, implementation_id
from waybook.integrations.pydantic_ai import WaybookMessageHistory
from waybook.stores import open_store

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


class History(Protocol):
    def messages(self) -> list[ModelMessage]: ...
    def append(self, messages: Sequence[ModelMessage]) -> None: ...


class JsonFileHistory:
    """Pydantic AI's documented persistence: the whole history as `ModelMessagesTypeAdapter` JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def messages(self) -> list[ModelMessage]:
        return ModelMessagesTypeAdapter.validate_json(self.path.read_bytes()) if self.path.exists() else []

    def append(self, messages: Sequence[ModelMessage]) -> None:
        self.path.write_bytes(ModelMessagesTypeAdapter.dump_json([*self.messages(), *messages]))


@pytest.fixture(params=IMPLEMENTATIONS, ids=implementation_id)
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], History]:
    """Opens the history of a conversation id, as a new object each time (a restart)."""

    def opened(conversation: str) -> History:
        if request.param == "reference":
            return JsonFileHistory(tmp_path / f"{conversation}.json")
        return WaybookMessageHistory(open_store(f"file:{tmp_path / 'store'}"), conversation)

    return opened


def every_part() -> list[ModelMessage]:
    """One message of each kind with every part kind the messages module documents, as a stored history
    reads back (the documented JSON round trip: `BinaryContent` of an image reads back as `BinaryImage`)."""
    return ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(_every_part()))


def _every_part() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content="be brief", timestamp=AT),
                UserPromptPart(content="hello", timestamp=AT),
                UserPromptPart(
                    content=[
                        "look at these",
                        ImageUrl(url="https://example.com/cat.png"),
                        BinaryContent(data=b"\x89PNG\x00\xff", media_type="image/png"),
                    ],
                    timestamp=AT,
                ),
            ],
            timestamp=AT,
        ),
        ModelResponse(
            parts=[
                ThinkingPart(content="the user wants the weather", signature="sig-1"),
                TextPart(content="Let me check."),
                ToolCallPart(tool_name="weather", args={"city": "Paris"}, tool_call_id="c1"),
                ToolCallPart(tool_name="clock", args='{"tz": "UTC"}', tool_call_id="c2"),
            ],
            model_name="scripted",
            timestamp=AT,
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(
                    tool_name="weather", content={"sky": "clear"}, tool_call_id="c1", timestamp=AT
                ),
                ToolReturnPart(
                    tool_name="clock",
                    content="tz must be IANA",
                    tool_call_id="c2",
                    outcome="retried",
                    timestamp=AT,
                ),
            ],
            timestamp=AT,
        ),
        ModelRequest(
            parts=[ToolReturnPart(tool_name="clock", content="12:00", tool_call_id="c3", timestamp=AT)]
        ),
        ModelResponse(parts=[TextPart(content="Clear skies in Paris.")], timestamp=AT),
    ]


def scripted(reply: Callable[[list[ModelMessage]], str]) -> Agent[None, str]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(content=reply(messages))])

    return Agent(FunctionModel(model))


def test_a_new_conversation_has_no_messages(history: Callable[[str], History]) -> None:
    assert history("new").messages() == []


def test_every_part_kind_comes_back_equal_after_a_restart(history: Callable[[str], History]) -> None:
    history("c").append(every_part())
    assert history("c").messages() == every_part()


def test_appends_keep_their_order(history: Callable[[str], History]) -> None:
    first, second = every_part()[:2], every_part()[2:]
    history("c").append(first)
    history("c").append(second)
    assert history("c").messages() == every_part()


def test_appending_nothing_changes_nothing(history: Callable[[str], History]) -> None:
    history("c").append([])
    assert history("c").messages() == []


def test_conversations_are_kept_apart(history: Callable[[str], History]) -> None:
    history("a").append(every_part()[:1])
    history("b").append(every_part()[1:2])
    assert history("a").messages() == every_part()[:1]
    assert history("b").messages() == every_part()[1:2]


def test_a_run_continues_from_the_stored_history(history: Callable[[str], History]) -> None:
    agent = scripted(lambda messages: f"I have seen {len(messages)} messages")
    first = agent.run_sync("hi", message_history=history("c").messages())
    history("c").append(first.new_messages())
    second = agent.run_sync("and now?", message_history=history("c").messages())
    history("c").append(second.new_messages())
    assert second.output == "I have seen 3 messages"
    assert history("c").messages() == second.all_messages()


def test_a_stored_history_is_what_the_model_sees_next_time(history: Callable[[str], History]) -> None:
    seen: list[Any] = []

    def reply(messages: list[ModelMessage]) -> str:
        seen.append(messages)
        return "ok"

    history("c").append(every_part())
    scripted(reply).run_sync("next", message_history=history("c").messages())
    assert seen[0][:3] == every_part()[:3]  # (the model sees the next two requests merged into one)
