"""WaybookChatStore beyond LlamaIndex's contract: a stale set is refused, and deleting erases nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import ChatMessage

from tests.integrations.runtime_checks import recorded, run_python, tree
from waybook.integrations.errors import StaleHistoryError
from waybook.integrations.llama_index import WaybookChatStore
from waybook.model import AssistantMessage, UserMessage
from waybook.stores import open_store


def says(role: str, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=text)


def test_a_set_from_a_read_another_process_has_since_extended_is_refused(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    chats = WaybookChatStore(open_store(url))
    chats.add_message("k", says("user", "hello"))
    seen = chats.get_messages("k")
    run_python(
        f"""
        from llama_index.core.llms import ChatMessage
        from waybook.integrations.llama_index import WaybookChatStore
        from waybook.stores import open_store
        theirs = ChatMessage(role="assistant", content="theirs")
        WaybookChatStore(open_store({url!r})).add_message("k", theirs)
        """
    )
    with pytest.raises(StaleHistoryError):
        chats.set_messages("k", [*seen, says("assistant", "mine")])
    assert [m.content for m in WaybookChatStore(open_store(url)).get_messages("k")] == ["hello", "theirs"]


def test_adding_after_another_process_added_appends_after_it(tmp_path: Path) -> None:
    url = f"file:{tmp_path / 'store'}"
    chats = WaybookChatStore(open_store(url))
    chats.add_message("k", says("user", "hello"))
    chats.get_messages("k")
    run_python(
        f"""
        from llama_index.core.llms import ChatMessage
        from waybook.integrations.llama_index import WaybookChatStore
        from waybook.stores import open_store
        theirs = ChatMessage(role="assistant", content="theirs")
        WaybookChatStore(open_store({url!r})).add_message("k", theirs)
        """
    )
    chats.add_message("k", says("user", "mine"))
    with pytest.raises(StaleHistoryError):  # the add did not make this store's read of ["hello"] current
        chats.set_messages("k", [says("user", "hello"), says("user", "mine")])
    assert [m.content for m in chats.get_messages("k")] == ["hello", "theirs", "mine"]


def test_delete_message_is_a_leaf_move_and_the_journal_keeps_the_message(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path / 'store'}")
    chats = WaybookChatStore(store)
    chats.set_messages("k", [says("user", "one"), says("assistant", "secret two"), says("user", "three")])
    chats.delete_message("k", 1)
    chats.delete_last_message("k")
    assert [m.content for m in chats.get_messages("k")] == ["one"]
    journal_id = chats.journal_id("k")
    assert journal_id is not None
    assert "secret two" in recorded(store, journal_id)
    shown = tree(tmp_path / "store", journal_id)
    # The original three, one and the copy of three (after the delete), and one (the leaf now).
    assert len(shown["branches"]) == 3
    assert [move["reason"] for move in shown["moves"]] == [
        "llama-index: delete_message 1",
        "llama-index: delete_last_message",
    ]


def test_delete_messages_is_a_reset_and_the_journal_keeps_them(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path / 'store'}")
    chats = WaybookChatStore(store)
    chats.set_messages("k", [says("user", "remember me")])
    chats.delete_messages("k")
    assert chats.get_keys() == []
    journal_id = chats.journal_id("k")
    assert journal_id is not None
    assert "remember me" in recorded(store, journal_id)


def test_messages_are_recorded_as_waybook_kinds() -> None:
    store = open_store("memory:")
    chats = WaybookChatStore(store)
    chats.set_messages("k", [says("user", "hi"), says("assistant", "hello")])
    journal_id = chats.journal_id("k")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        kinds = [type(record.body) for record in journal.read() if record.body.IS_NODE]
    assert kinds == [UserMessage, AssistantMessage]
