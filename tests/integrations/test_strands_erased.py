"""Issue 46 for the Strands session repository: after `erase`, `list_messages` (what the session manager
restores an agent's conversation from) lists each erased message as the placeholder naming its erasure,
as a `SessionMessage` Strands loads, with every tool use answered by a result after it and the message
ids in order; an erased session or agent record reads as never written, never as a broken session."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("strands")

from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from tests.helpers.erased_sessions import REASON
from waybook.integrations.strands import WaybookSessionRepository
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import JournalStore, open_store

SAID = {2: "ask-vault", 3: "path-a", 4: "holds-a", 5: "path-b", 6: "holds-b", 7: "both-read"}
"""A text only the message of each seq holds: a question, a tool use and its result, a message with two
tool uses and the message with both results (stored whole), an answer."""


def use(use_id: str, path: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": use_id, "name": "read", "input": {"p": path}}}


def result(use_id: str, said: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": use_id, "status": "success", "content": [{"text": said}]}}


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": [{"text": SAID[2]}]},
    {"role": "assistant", "content": [use("a", SAID[3])]},
    {"role": "user", "content": [result("a", SAID[4])]},
    {"role": "assistant", "content": [use("b", SAID[5]), use("c", SAID[5] + "!")]},
    {"role": "user", "content": [result("b", SAID[6]), result("c", SAID[6] + "!")]},
    {"role": "assistant", "content": [{"text": SAID[7]}]},
]


def started(store: JournalStore) -> WaybookSessionRepository:
    repository = WaybookSessionRepository(store)
    repository.create_session(Session(session_id="s", session_type=SessionType.AGENT))
    repository.create_agent("s", SessionAgent(agent_id="a", state={}, conversation_manager_state={}))
    for n, message in enumerate(MESSAGES):
        repository.create_message("s", "a", SessionMessage(message=message, message_id=n))  # type: ignore[arg-type]
    return repository


def pairing_problems(messages: list[SessionMessage]) -> list[str]:
    found, open_uses = [], set()
    for n, stored in enumerate(messages):
        content = stored.message["content"]
        results = {b["toolResult"]["toolUseId"] for b in content if "toolResult" in b}
        if results != open_uses:
            found.append(f"message {n}: results {sorted(results)} for tool uses {sorted(open_uses)}")
        open_uses = {b["toolUse"]["toolUseId"] for b in content if "toolUse" in b}
    return found + ([f"tool uses {sorted(open_uses)} never answered"] if open_uses else [])


@pytest.mark.parametrize("seqs", [[2], [3], [4], [3, 4], [5], [6], [4, 5], [7], [2, 3, 4, 5, 6, 7]])
def test_erased_messages_are_listed_as_placeholders_and_every_tool_use_stays_answered(
    seqs: list[int],
) -> None:
    """Before, an erased message was silently left out of the conversation an agent is restored from:
    a tool use's result (or a result's tool use) was left orphaned."""
    store = open_store("memory:")
    repository = started(store)
    journal_id = repository.journal_ids("s", "a")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        by = erase(journal, seqs, reason=REASON).erasures[0].seq
        assert verify(journal).ok
    messages = WaybookSessionRepository(store).list_messages("s", "a")
    dumped = json.dumps([m.to_dict() for m in messages])
    assert [s for s, said in SAID.items() if said in dumped] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(by, REASON) in dumped
    assert [m.message_id for m in messages] == list(range(len(MESSAGES)))
    assert pairing_problems(messages) == []


def test_an_erased_agent_record_reads_as_never_written_not_as_a_broken_session() -> None:
    """Before, reading the session failed with TypeError ('NoneType' object is not subscriptable)."""
    store = open_store("memory:")
    repository = started(store)
    journal_id = repository.journal_ids("s")
    assert journal_id is not None
    with store.open(journal_id) as journal:
        agent = [r.seq for r in journal.read() if getattr(r.body, "type", None) == "strands.agent"]
        erase(journal, agent, reason=REASON)
    fresh = WaybookSessionRepository(store)
    assert fresh.read_session("s") is not None
    assert fresh.read_agent("s", "a") is None
