"""WaybookHistoryProvider beyond Agent Framework's contract: a second process's run is refused when it saves
over a history that changed since it loaded it, clearing erases nothing, and messages are waybook kinds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

from agent_framework import Content, Message

from tests.integrations.runtime_checks import recorded, run_python, tree
from waybook.integrations.agent_framework import WaybookHistoryProvider
from waybook.integrations.errors import StaleHistoryError
from waybook.model import AssistantMessage, ToolCallBlock, ToolResult, UserMessage
from waybook.stores import open_store


def says(role: str, text: str) -> Message:
    return Message(role=role, contents=[text])


def test_a_save_over_a_history_another_process_saved_to_since_it_was_loaded_is_refused(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path / 'store'}"
    provider = WaybookHistoryProvider(open_store(url))
    asyncio.run(provider.save_messages("s", [says("user", "hello")]))
    loaded = asyncio.run(provider.get_messages("s"))
    run_python(
        f"""
        import asyncio
        from agent_framework import Message
        from waybook.integrations.agent_framework import WaybookHistoryProvider
        from waybook.stores import open_store
        theirs = [Message(role="user", contents=["theirs"]), Message(role="assistant", contents=["ok"])]
        asyncio.run(WaybookHistoryProvider(open_store({url!r})).save_messages("s", theirs))
        """
    )
    with pytest.raises(StaleHistoryError):
        asyncio.run(provider.save_messages("s", [*loaded, says("user", "mine")]))
    again = asyncio.run(WaybookHistoryProvider(open_store(url)).get_messages("s"))
    assert [message.text for message in again] == ["hello", "theirs", "ok"]


def test_clear_is_a_reset_and_the_journal_keeps_the_messages(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path / 'store'}")
    provider = WaybookHistoryProvider(store)
    asyncio.run(provider.save_messages("s", [says("user", "my secret"), says("assistant", "kept")]))
    asyncio.run(provider.clear("s"))
    asyncio.run(provider.save_messages("s", [says("user", "fresh start")]))
    assert [message.text for message in asyncio.run(provider.get_messages("s"))] == ["fresh start"]
    journal_id = provider.journal_id("s")
    assert journal_id is not None
    assert "my secret" in recorded(store, journal_id)
    assert len(tree(tmp_path / "store", journal_id)["branches"]) == 2  # before and after the reset


def test_messages_are_recorded_as_waybook_kinds_with_blocks() -> None:
    store = open_store("memory:")
    provider = WaybookHistoryProvider(store)
    call = Content.from_function_call(call_id="c1", name="weather", arguments={"city": "Oslo"})
    result = Content.from_function_result(call_id="c1", result="snow")
    messages = [
        says("user", "weather?"),
        Message(role="assistant", contents=[call]),
        Message(role="tool", contents=[result]),
    ]
    asyncio.run(provider.save_messages("s", messages))
    journal_id = provider.journal_id("s")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        nodes = [record.body for record in journal.read() if record.body.IS_NODE]
    assert [type(body) for body in nodes] == [UserMessage, AssistantMessage, ToolResult]
    assert nodes[1].content == (ToolCallBlock(call_id="c1", name="weather", arguments={"city": "Oslo"}),)  # type: ignore[union-attr]
    assert nodes[2].call_id == "c1"  # type: ignore[union-attr]
