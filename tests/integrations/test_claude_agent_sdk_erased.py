"""Issue 46 for the Claude Agent SDK session store: after `erase`, `load` gives back an entry in place of
each erased one (never `None`, never its text): the placeholder naming the erasure, in the transcript's
uuid chain, so the SDK's own readers (`get_session_messages_from_store`, the JSONL a resume writes) keep
every neighbour, and a tool result whose call was erased still follows a call with its id."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import anyio
from claude_agent_sdk import get_session_messages_from_store, project_key_for_directory

from tests.helpers.erased_sessions import REASON
from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import JournalStore, open_store

SESSION = "6f1d2a4e-8c1b-4c9e-9a57-1d0f6b3e2c10"
DIRECTORY = "/tmp/project"
KEY: Any = {"project_key": project_key_for_directory(DIRECTORY), "session_id": SESSION}
UUIDS = [str(uuid.UUID(int=n + 1)) for n in range(6)]
SAID = {2: "read-the-vault", 3: "vault-path-a", 4: "vault-path-b", 5: "holds-a", 6: "holds-b", 7: "both-read"}
"""A text only the entry of each seq holds (the header is seq 1; the summary follows the entries)."""


def entry(n: int, kind: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = f"msg_{n}"
    return {
        "type": kind,
        "uuid": UUIDS[n],
        "parentUuid": UUIDS[n - 1] if n else None,
        "sessionId": SESSION,
        "timestamp": f"2026-12-07T00:00:0{n}Z",
        "message": message,
    }


ENTRIES = [
    entry(0, "user", SAID[2]),
    entry(1, "assistant", [{"type": "tool_use", "id": "toolu_a", "name": "Read", "input": {"p": SAID[3]}}]),
    entry(2, "assistant", [{"type": "tool_use", "id": "toolu_b", "name": "Read", "input": {"p": SAID[4]}}]),
    entry(3, "user", [{"type": "tool_result", "tool_use_id": "toolu_a", "content": SAID[5]}]),
    entry(4, "user", [{"type": "tool_result", "tool_use_id": "toolu_b", "content": SAID[6]}]),
    entry(5, "assistant", [{"type": "text", "text": SAID[7]}]),
]


def erased_store(seqs: list[int]) -> tuple[JournalStore, int]:
    store = open_store("memory:")
    anyio.run(WaybookSessionStore(store).append, KEY, ENTRIES)
    (info,) = list(store.list())
    with store.open(info.journal_id) as journal:
        receipt = erase(journal, seqs, reason=REASON)
        assert verify(journal).ok
    return store, receipt.erasures[0].seq


def tool_pairing_problems(entries: list[Any]) -> list[str]:
    """Each tool result must answer a tool use made before it (the Messages API's rule)."""
    made: set[str] = set()
    found = []
    for item in entries:
        content = item["message"]["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                made.add(block["id"])
            elif block.get("type") == "tool_result" and block["tool_use_id"] not in made:
                found.append(f"tool_result {block['tool_use_id']} answers no tool_use before it")
    return found


@pytest.mark.parametrize("seqs", [[2], [3], [4], [3, 4], [5], [7], [2, 3, 4, 5, 6, 7]])
def test_an_erased_entry_loads_as_the_placeholder_in_the_chain_and_the_sdk_keeps_every_neighbour(
    seqs: list[int],
) -> None:
    """Before, `load` gave `None` in its place: the SDK wrote a `null` line into the transcript a resume
    reads, and its chain builder lost every message before the hole."""
    store, by = erased_store(seqs)
    loaded = anyio.run(WaybookSessionStore(store).load, KEY)
    assert loaded is not None
    assert all(isinstance(item, dict) and isinstance(item.get("uuid"), str) for item in loaded)
    shown = json.dumps(loaded)
    assert [seq for seq, said in SAID.items() if said in shown] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(by, REASON) in shown
    assert tool_pairing_problems(loaded) == []
    messages = anyio.run(get_session_messages_from_store, WaybookSessionStore(store), SESSION, DIRECTORY)
    read = json.dumps([m.message for m in messages])
    for seq, said in SAID.items():
        assert (said in read) is (seq not in seqs), seq
    assert len(messages) == len(ENTRIES)


def test_a_store_that_loaded_the_transcript_before_the_erasure_shows_the_placeholder_after_it() -> None:
    store = open_store("memory:")
    reader = WaybookSessionStore(store)
    anyio.run(reader.append, KEY, ENTRIES)
    assert anyio.run(reader.load, KEY) == ENTRIES  # read, and held, before the erasure
    (info,) = list(store.list())
    with store.open(info.journal_id) as journal:
        by = erase(journal, [2, 8], reason=REASON).erasures[0].seq  # the first entry and the summary
    shown = json.dumps(anyio.run(reader.load, KEY))
    assert SAID[2] not in shown
    assert erased_placeholder(by, REASON) in shown
    summaries = anyio.run(reader.list_session_summaries, KEY["project_key"])
    assert SAID[2] not in json.dumps(summaries)
