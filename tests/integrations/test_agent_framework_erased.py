"""Issue 46 for Agent Framework's history provider: after `erase`, `get_messages` (the history a run
loads) shows each erased message as the placeholder naming its erasure, as a `Message` the framework's
own `from_dict` loads, with every function call answered by a result after it, never the erased text."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("agent_framework")

from agent_framework import Content, Message

from tests.helpers.erased_sessions import REASON
from waybook.integrations.agent_framework import WaybookHistoryProvider
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import open_store

SAID = {2: "ask-vault", 3: "path-a", 4: "holds-a", 5: "path-b", 6: "holds-b", 7: "both-read"}
"""A text only the message of each seq holds: a question, a call and its result, a message with two
calls and the tool message with both results (stored whole), an answer."""


def history() -> list[Message]:
    def call(call_id: str, path: str) -> Content:
        return Content.from_function_call(call_id=call_id, name="read", arguments={"p": path})

    def result(call_id: str, said: str) -> Content:
        return Content.from_function_result(call_id=call_id, result=said)

    return [
        Message(role="user", contents=[Content.from_text(SAID[2])]),
        Message(role="assistant", contents=[call("a", SAID[3])]),
        Message(role="tool", contents=[result("a", SAID[4])]),
        Message(role="assistant", contents=[call("b", SAID[5]), call("c", SAID[5] + "!")]),
        Message(role="tool", contents=[result("b", SAID[6]), result("c", SAID[6] + "!")]),
        Message(role="assistant", contents=[Content.from_text(SAID[7])]),
    ]


def pairing_problems(messages: list[Message]) -> list[str]:
    """Every function call answered by the tool messages right after it, every result answering one."""
    found, open_calls = [], set()
    for n, message in enumerate(messages):
        if message.role == "tool":
            for content in message.contents:
                if content.call_id not in open_calls:
                    found.append(f"message {n}: result {content.call_id} answers no open call")
                open_calls.discard(content.call_id)
            continue
        if open_calls:
            found.append(f"message {n}: calls {sorted(open_calls)} unanswered before it")
        open_calls = {c.call_id for c in message.contents if c.type == "function_call"}
    return found + ([f"calls {sorted(open_calls)} never answered"] if open_calls else [])


@pytest.mark.parametrize("seqs", [[2], [3], [4], [3, 4], [5], [6], [4, 5], [7], [2, 3, 4, 5, 6, 7]])
def test_erased_messages_load_as_placeholders_and_every_call_stays_answered(seqs: list[int]) -> None:
    """Before, an erased message was silently left out of the history the next run loads: a call's
    result (or a result's call) was left orphaned."""
    store = open_store("memory:")
    provider = WaybookHistoryProvider(store)
    asyncio.run(provider.save_messages("s", history()))
    journal_id = provider.journal_id("s")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        by = erase(journal, seqs, reason=REASON).erasures[0].seq
        assert verify(journal).ok
    messages = asyncio.run(WaybookHistoryProvider(store).get_messages("s"))
    dumped = json.dumps([m.to_dict() for m in messages])
    assert [s for s, said in SAID.items() if said in dumped] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(by, REASON) in dumped
    assert pairing_problems(messages) == []
