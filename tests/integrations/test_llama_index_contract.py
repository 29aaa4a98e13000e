"""LlamaIndex's `BaseChatStore` contract, run on its own `SimpleChatStore` and on `WaybookChatStore`.

llama-index-core ships no chat-store tests in its sdist; these are written from `BaseChatStore`'s
documented methods and checked first on `SimpleChatStore`, the reference, then on waybook's store (a
directory store). A `ChatMemoryBuffer` over each store shows the store works where LlamaIndex uses it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.storage.chat_store.base import BaseChatStore

from tests.integrations.runtime_checks import IMPLEMENTATIONS, implementation_id
from waybook.integrations.llama_index import WaybookChatStore
from waybook.stores import open_store


@pytest.fixture(params=IMPLEMENTATIONS, ids=implementation_id)
def chat_store(request: pytest.FixtureRequest, tmp_path: Path) -> BaseChatStore:
    if request.param == "reference":
        return SimpleChatStore()
    return WaybookChatStore(open_store(f"file:{tmp_path / 'store'}"))


def says(role: str, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=text)


def texts(messages: list[ChatMessage] | None) -> list[str | None]:
    return [message.content for message in messages or []]


def conversation() -> list[ChatMessage]:
    """A new list each time: SimpleChatStore keeps the list it is given and edits it in place."""
    return [says("user", "one"), says("assistant", "two"), says("user", "three")]


def test_an_unknown_key_has_no_messages(chat_store: BaseChatStore) -> None:
    assert chat_store.get_messages("nobody") == []
    assert chat_store.get_keys() == []


def test_set_then_get_returns_the_messages(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    assert chat_store.get_messages("k") == conversation()
    assert chat_store.get_keys() == ["k"]


def test_set_replaces_what_was_there(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    chat_store.set_messages("k", [says("user", "one"), says("assistant", "other")])
    assert texts(chat_store.get_messages("k")) == ["one", "other"]


def test_add_appends_in_order(chat_store: BaseChatStore) -> None:
    for message in conversation():
        chat_store.add_message("k", message)
    assert chat_store.get_messages("k") == conversation()


def test_add_at_an_index_inserts_there(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    chat_store.add_message("k", says("system", "first"), idx=0)  # type: ignore[call-arg]
    assert texts(chat_store.get_messages("k")) == ["first", "one", "two", "three"]


def test_delete_message_removes_that_index_and_returns_it(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    removed = chat_store.delete_message("k", 1)
    assert removed == conversation()[1]
    assert texts(chat_store.get_messages("k")) == ["one", "three"]


def test_delete_message_past_the_end_returns_none(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    assert chat_store.delete_message("k", 3) is None
    assert chat_store.delete_message("nobody", 0) is None
    assert chat_store.get_messages("k") == conversation()


def test_delete_last_message_removes_and_returns_it(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    assert chat_store.delete_last_message("k") == conversation()[-1]
    assert chat_store.get_messages("k") == conversation()[:-1]
    assert chat_store.delete_last_message("nobody") is None


def test_delete_messages_returns_them_and_forgets_the_key(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    chat_store.set_messages("other", conversation()[:1])
    assert chat_store.delete_messages("k") == conversation()
    assert chat_store.get_messages("k") == []
    assert chat_store.get_keys() == ["other"]
    assert chat_store.delete_messages("nobody") is None


def test_a_key_set_to_no_messages_is_a_key_until_deleted(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", [])
    assert chat_store.get_keys() == ["k"]
    assert chat_store.delete_messages("k") == []
    assert chat_store.get_keys() == []


def test_a_deleted_key_can_be_written_again(chat_store: BaseChatStore) -> None:
    chat_store.set_messages("k", conversation())
    chat_store.delete_messages("k")
    chat_store.add_message("k", says("user", "again"))
    assert texts(chat_store.get_messages("k")) == ["again"]
    assert chat_store.get_keys() == ["k"]


def test_keys_are_kept_apart(chat_store: BaseChatStore) -> None:
    chat_store.add_message("a", says("user", "for a"))
    chat_store.add_message("b", says("user", "for b"))
    assert texts(chat_store.get_messages("a")) == ["for a"]
    assert sorted(chat_store.get_keys()) == ["a", "b"]


def test_typed_blocks_and_extra_fields_come_back_equal(chat_store: BaseChatStore) -> None:
    messages = [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(
            role="assistant",
            blocks=[
                ThinkingBlock(content="need the weather"),
                TextBlock(text="Checking."),
                ToolCallBlock(tool_call_id="c1", tool_name="weather", tool_kwargs={"city": "Oslo"}),
            ],
            additional_kwargs={"model": "scripted", "tool_calls": [{"id": "c1"}]},
        ),
        ChatMessage(role="tool", content="snow", additional_kwargs={"tool_call_id": "c1", "name": "weather"}),
        ChatMessage(role="function", content="legacy"),
    ]
    chat_store.set_messages("k", messages)
    assert chat_store.get_messages("k") == messages


def test_the_async_methods_do_what_the_sync_ones_do(chat_store: BaseChatStore) -> None:
    async def use() -> list[ChatMessage]:
        await chat_store.aset_messages("k", conversation())
        await chat_store.async_add_message("k", says("assistant", "four"))
        await chat_store.adelete_message("k", 0)
        return await chat_store.aget_messages("k")

    assert texts(asyncio.run(use())) == ["two", "three", "four"]


def test_a_chat_memory_buffer_keeps_its_history_in_the_store(chat_store: BaseChatStore) -> None:
    memory: Callable[[], ChatMemoryBuffer] = lambda: ChatMemoryBuffer.from_defaults(  # noqa: E731
        chat_store=chat_store, chat_store_key="user-1", token_limit=10_000
    )
    memory().put(says("user", "hello"))
    memory().put(says("assistant", "hi"))
    assert texts(memory().get_all()) == ["hello", "hi"]
    memory().reset()
    assert memory().get_all() == []
