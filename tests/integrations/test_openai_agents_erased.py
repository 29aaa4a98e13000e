"""Issue 46 for the OpenAI Agents SDK session: after `erase`, `get_items` (what the Runner sends to the
Responses API) shows each erased item as the placeholder naming its erasure, keeps every function call
paired with its output (the Responses API's own input item types and pairing rules:
tests/helpers/provider_checks.py), and never gives back the erased text, not even from a session object
that read the items before the erasure."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("agents")

from tests.helpers.erased_sessions import REASON
from tests.helpers.provider_checks import openai_responses_problems
from waybook.integrations.openai_agents import WaybookSession
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import JournalStore

SAID = {2: "read-the-vault", 3: "vault-path", 4: "list-dir", 5: "vault-holds", 6: "two-files", 7: "both-read"}
"""A text only the item of each seq holds (the header is seq 1)."""
ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": SAID[2]},
    {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": json.dumps({"p": SAID[3]})},
    {"type": "function_call", "call_id": "call_2", "name": "list", "arguments": json.dumps({"d": SAID[4]})},
    {"type": "function_call_output", "call_id": "call_1", "output": SAID[5]},
    {"type": "function_call_output", "call_id": "call_2", "output": SAID[6]},
    {"role": "assistant", "content": SAID[7]},
]
ERASURE = 2 + len(ITEMS)
"""The erasure record's seq (the header is seq 1, the items seqs 2 to 7)."""


def erased_items(store: JournalStore, seqs: list[int], *, reader: WaybookSession | None = None) -> list[Any]:
    session = WaybookSession("erased", store)
    asyncio.run(session.add_items(ITEMS))
    if reader is not None:
        assert asyncio.run(reader.get_items()) == ITEMS  # read (and held) before the erasure
    journal = store.open(session.journal_id)
    erase(journal, seqs, reason=REASON)
    assert verify(journal).ok
    return asyncio.run((reader or WaybookSession("erased", store)).get_items())


@pytest.mark.parametrize("seqs", [[2], [3], [4], [5], [3, 5], [3, 4], [2, 3, 4, 5, 6, 7]])
def test_erased_items_come_back_as_placeholders_the_responses_api_accepts(
    store: JournalStore, seqs: list[int]
) -> None:
    """Before, an erased item was silently left out: an erased call's output (or an erased output's
    call) was left orphaned, which the Responses API refuses, and nothing showed the hole."""
    items = erased_items(store, seqs)
    assert openai_responses_problems(items) == [], items
    shown = json.dumps(items)
    assert [seq for seq, said in SAID.items() if said in shown] == [s for s in SAID if s not in seqs]
    assert erased_placeholder(ERASURE, REASON) in shown
    for seq, item in enumerate(ITEMS, start=2):
        if seq not in seqs:
            assert item in items  # a neighbour, as it was added
    calls = sorted(i["call_id"] for i in items if i.get("type") == "function_call")
    assert calls == ["call_1", "call_2"]


def test_a_session_that_read_the_items_before_the_erasure_shows_the_hole_after_it(
    store: JournalStore,
) -> None:
    """A long-lived session object (a server's) folds the erasure record like any other: the items it
    holds in memory for the erased records are dropped and shown as the placeholder from then on."""
    reader = WaybookSession("erased", store)
    items = erased_items(store, [3, 5], reader=reader)
    assert SAID[3] not in json.dumps(items)
    assert SAID[5] not in json.dumps(items)
    assert openai_responses_problems(items) == [], items
    assert erased_placeholder(ERASURE, REASON) in json.dumps(items)


def test_an_erased_item_stored_verbatim_comes_back_as_a_placeholder_message(store: JournalStore) -> None:
    session = WaybookSession("verbatim", store)
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "vault-plan"}],
    }
    asyncio.run(session.add_items([{"role": "user", "content": "go"}, reasoning]))
    journal = store.open(session.journal_id)
    by = erase(journal, [3], reason=REASON).erasures[0].seq
    items = asyncio.run(WaybookSession("verbatim", store).get_items())
    assert items == [
        {"role": "user", "content": "go"},
        {"role": "user", "content": erased_placeholder(by, REASON)},
    ]
    assert openai_responses_problems(items) == []
