"""Issue 46 for LlamaIndex's chat store: after `erase`, `get_messages` shows each erased message as the
placeholder naming its erasure, as a `ChatMessage` LlamaIndex validates, with every tool call answered by
a tool message after it, never the erased text."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock

from tests.helpers.erased_sessions import REASON
from waybook.integrations.llama_index import WaybookChatStore
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import open_store

SAID = {2: "ask-vault", 3: "path-a", 4: "path-b", 5: "holds-a", 6: "holds-b", 7: "both-read"}
"""A text only the message of each seq holds: a question, two calls, their results, an answer."""


def history() -> list[ChatMessage]:
    def call(call_id: str, path: str) -> ToolCallBlock:
        return ToolCallBlock(tool_call_id=call_id, tool_name="read", tool_kwargs={"p": path})

    def result(call_id: str, said: str) -> ChatMessage:
        return ChatMessage(
            role="tool", content=said, additional_kwargs={"tool_call_id": call_id, "name": "read"}
        )

    return [
        ChatMessage(role="user", content=SAID[2]),
        ChatMessage(role="assistant", blocks=[call("a", SAID[3])]),
        ChatMessage(role="assistant", blocks=[call("b", SAID[4])]),
        result("a", SAID[5]),
        result("b", SAID[6]),
        ChatMessage(role="assistant", blocks=[TextBlock(text=SAID[7])]),
    ]


def pairing_problems(messages: list[ChatMessage]) -> list[str]:
    made: set[str] = set()
    found = []
    for n, message in enumerate(messages):
        made |= {b.tool_call_id for b in message.blocks if isinstance(b, ToolCallBlock) and b.tool_call_id}
        answered = message.additional_kwargs.get("tool_call_id")
        if message.role == "tool" and answered not in made:
            found.append(f"message {n}: tool message for {answered} answers no call before it")
    answers = {m.additional_kwargs.get("tool_call_id") for m in messages if m.role == "tool"}
    return found + [f"call {c} never answered" for c in sorted(made - answers)]


@pytest.mark.parametrize("seqs", [[2], [3], [4], [3, 4], [5], [3, 5], [7], [2, 3, 4, 5, 6, 7]])
def test_erased_messages_load_as_placeholders_and_every_call_stays_answered(seqs: list[int]) -> None:
    """Before, an erased message was silently left out: a call's tool message was left orphaned."""
    store = open_store("memory:")
    chats = WaybookChatStore(store)
    chats.set_messages("k", history())
    journal_id = chats.journal_id("k")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        by = erase(journal, seqs, reason=REASON).erasures[0].seq
        assert verify(journal).ok
    messages = WaybookChatStore(store).get_messages("k")
    dumped = json.dumps([m.model_dump(mode="json") for m in messages])
    assert [s for s, said in SAID.items() if said in dumped] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(by, REASON) in dumped
    assert pairing_problems(messages) == []
