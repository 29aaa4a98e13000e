"""Issue 46 for Pydantic AI's message history: after `erase`, `messages()` (what a run passes as
`message_history=`) shows each erased message as the placeholder naming its erasure, in the part its kind
was, so Pydantic AI's own `ModelMessagesTypeAdapter` loads it, every tool call stays answered by the
request after it (what the providers require), and the next run's model sees the hole, never the text."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.helpers.erased_sessions import REASON
from waybook.integrations.pydantic_ai import WaybookMessageHistory
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import open_store

SAID = {2: "ask-vault", 3: "path-a", 4: "holds-a", 5: "path-b", 6: "holds-b", 7: "both-read"}
"""A text only the message of each seq holds (the header is seq 1): a question, a call and its return, a
response with two calls and the request with both returns (stored whole), an answer."""


def history_messages() -> list[ModelMessage]:
    return [
        ModelRequest.user_text_prompt(SAID[2]),
        ModelResponse(parts=[ToolCallPart(tool_name="read", args={"p": SAID[3]}, tool_call_id="a")]),
        ModelRequest(parts=[ToolReturnPart(tool_name="read", content=SAID[4], tool_call_id="a")]),
        ModelResponse(
            parts=[
                ToolCallPart(tool_name="read", args={"p": SAID[5]}, tool_call_id="b"),
                ToolCallPart(tool_name="read", args={"p": SAID[5] + "!"}, tool_call_id="c"),
            ]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart(tool_name="read", content=SAID[6], tool_call_id="b"),
                ToolReturnPart(tool_name="read", content=SAID[6] + "!", tool_call_id="c"),
            ]
        ),
        ModelResponse(parts=[TextPart(content=SAID[7])]),
    ]


def pairing_problems(messages: list[ModelMessage]) -> list[str]:
    """Every tool call answered by a return in the request right after its response, and every return
    answering a call of the response right before it (the providers' rule)."""
    found = []
    for n, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            calls = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
            following = messages[n + 1] if n + 1 < len(messages) else None
            returns = {
                p.tool_call_id for p in getattr(following, "parts", ()) if isinstance(p, ToolReturnPart)
            }
            if calls - returns:
                found.append(f"message {n}: calls {sorted(calls - returns)} unanswered")
        else:
            previous = messages[n - 1] if n else None
            made = {p.tool_call_id for p in getattr(previous, "parts", ()) if isinstance(p, ToolCallPart)}
            orphans = {p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)} - made
            if orphans:
                found.append(f"message {n}: returns {sorted(orphans)} answer no call before")
    return found


@pytest.mark.parametrize("seqs", [[2], [3], [4], [3, 4], [5], [6], [5, 6], [7], [4, 5], [2, 3, 4, 5, 6, 7]])
def test_erased_messages_come_back_as_placeholders_and_every_call_stays_answered(seqs: list[int]) -> None:
    """Before, an erased message was silently left out: a call's return (or a return's call) was left
    orphaned in the history the next run sends its model."""
    store = open_store("memory:")
    history = WaybookMessageHistory(store, "chat")
    history.append(history_messages())
    assert history.journal_id is not None
    with store.open(history.journal_id) as journal:
        by = erase(journal, seqs, reason=REASON).erasures[0].seq
        assert verify(journal).ok
    messages = WaybookMessageHistory(store, "chat").messages()
    dumped = json.dumps(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))
    assert [s for s, said in SAID.items() if said in dumped] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(by, REASON) in dumped
    assert pairing_problems(messages) == []
    seen: list[Any] = []

    def model(sent: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(ModelMessagesTypeAdapter.dump_python(sent, mode="json"))
        return ModelResponse(parts=[TextPart(content="ok")])

    WaybookMessageHistory(store, "chat").run_sync(Agent(FunctionModel(model)), "next?")
    assert erased_placeholder(by, REASON) in json.dumps(seen)
    assert all(SAID[s] not in json.dumps(seen) for s in seqs)


def test_a_history_read_before_the_erasure_shows_the_placeholder_after_it() -> None:
    store = open_store("memory:")
    history = WaybookMessageHistory(store, "chat")
    history.append(history_messages())
    assert len(history.messages()) == 6  # read, and held, before the erasure
    assert history.journal_id is not None
    with store.open(history.journal_id) as journal:
        by = erase(journal, [4], reason=REASON).erasures[0].seq
    dumped = json.dumps(ModelMessagesTypeAdapter.dump_python(history.messages(), mode="json"))
    assert SAID[4] not in dumped
    assert erased_placeholder(by, REASON) in dumped
