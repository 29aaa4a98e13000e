"""WaybookMessageHistory beyond Pydantic AI's contract: a stale writer is refused, undo erases nothing, and
the journal holds the messages as waybook kinds a viewer or exporter reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.integrations.runtime_checks import recorded, run_python, tree
from waybook.integrations.errors import StaleHistoryError
from waybook.integrations.pydantic_ai import WaybookMessageHistory
from waybook.model import (
    AssistantMessage,
    StaleWriterError,
    ToolCallBlock,
    ToolResult,
    UserMessage,
    plain_text,
)
from waybook.stores import open_store


def replying(*replies: str) -> Agent[None, str]:
    script = iter(replies)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(content=next(script))])

    return Agent(FunctionModel(model))


def test_a_run_that_read_a_history_another_process_has_since_extended_is_refused(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    history = WaybookMessageHistory(open_store(url), "chat")
    mine = replying("mine").run_sync("from this process", message_history=history.messages())
    run_python(
        f"""
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
        from waybook.integrations.pydantic_ai import WaybookMessageHistory
        from waybook.stores import open_store
        WaybookMessageHistory(open_store({url!r}), "chat").run_sync(Agent(TestModel()), "from the other")
        """
    )
    with pytest.raises(StaleHistoryError) as refused:
        history.append(mine.new_messages())
    assert isinstance(refused.value, StaleWriterError)
    assert "Read the messages again" in str(refused.value)
    again = WaybookMessageHistory(open_store(url), "chat").messages()
    assert [m.parts[0].content for m in again if m.kind == "request"] == ["from the other"]  # type: ignore[union-attr]


def test_undo_run_moves_the_leaf_back_and_the_journal_still_holds_the_run(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path / 'store'}")
    history = WaybookMessageHistory(store, "chat")
    history.run_sync(replying("Paris."), "Where is the Louvre?")
    history.run_sync(replying("Rome."), "And the Colosseum?")
    undone = history.undo_run()
    assert [m.kind for m in undone] == ["request", "response"]
    history.run_sync(replying("Athens."), "And the Parthenon?")
    assert len(history.messages()) == 4
    assert history.journal_id is not None
    assert "Rome." in recorded(store, history.journal_id)
    shown = tree(tmp_path / "store", history.journal_id)
    assert len(shown["branches"]) == 2
    assert [move["reason"] for move in shown["moves"]] == ["pydantic-ai: undo_run"]


def test_clear_starts_over_and_keeps_every_earlier_message(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path / 'store'}")
    history = WaybookMessageHistory(store, "chat")
    history.run_sync(replying("Paris."), "Where is the Louvre?")
    history.clear()
    assert history.messages() == []
    assert history.journal_id is not None
    assert "Paris." in recorded(store, history.journal_id)


def test_messages_are_recorded_as_waybook_kinds_with_blocks() -> None:
    store = open_store("memory:")
    calls = iter([True, False])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if next(calls):
            return ModelResponse(
                parts=[ToolCallPart(tool_name="weather", args={"city": "Oslo"}, tool_call_id="t1")]
            )
        return ModelResponse(parts=[TextPart(content="Snow in Oslo.")])

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"snow in {city}"

    history = WaybookMessageHistory(store, "chat")
    history.run_sync(agent, "Weather in Oslo?")
    assert history.journal_id is not None
    with store.open(history.journal_id) as journal:
        nodes = [record.body for record in journal.read() if record.body.IS_NODE]
    assert [type(body) for body in nodes] == [UserMessage, AssistantMessage, ToolResult, AssistantMessage]
    user, call, result, answer = nodes
    assert plain_text(user.content) == "Weather in Oslo?"  # type: ignore[union-attr]
    assert call.content == (ToolCallBlock(call_id="t1", name="weather", arguments={"city": "Oslo"}),)  # type: ignore[union-attr]
    assert call.stop_reason == "tool_use"  # type: ignore[union-attr]
    assert (result.call_id, result.tool_name) == ("t1", "weather")  # type: ignore[union-attr]
    assert plain_text(answer.content) == "Snow in Oslo."  # type: ignore[union-attr]


def test_the_async_run_appends_the_runs_messages(tmp_path: Path) -> None:
    history = WaybookMessageHistory(open_store(f"file:{tmp_path / 'store'}"), "chat")
    result = asyncio.run(history.run(replying("Hi."), "Hello"))
    assert history.messages() == result.all_messages()
