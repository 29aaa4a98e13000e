"""WaybookSession against the OpenAI Agents SDK's documented session behaviour.

The SDK ships no shared session suite; these tests state its documented contract (get_items, add_items,
pop_item, clear_session, limits, shared ids, the Runner, compaction) and what waybook adds (nothing is
erased, every change is one atomic append, concurrent writers lose nothing).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, set_tracing_disabled
from agents.memory import OpenAIResponsesCompactionSession, SessionSettings
from agents.testing import ScriptedModel, assistant_message

from waybook.integrations.openai_agents import WaybookSession
from waybook.integrations.openai_agents._items import ITEM, body_of, item_of
from waybook.journal import verify
from waybook.model import (
    AssistantMessage,
    CustomEntry,
    InvalidRecordError,
    LeafMoved,
    Reset,
    ToolResult,
    UserMessage,
)
from waybook.stores import JournalStore

set_tracing_disabled(True)  # no network: nothing to export traces to

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "What is in data.csv?"},
    {"role": "system", "content": "Be terse."},
    {"role": "developer", "content": "Use tools.", "type": "message"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Let me look.", "annotations": [], "logprobs": []}],
    },
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path":"data.csv"}',
        "id": "fc_1",
    },
    {"type": "function_call", "call_id": "call_2", "name": "read", "arguments": '{ "path" : "x" }'},
    {"type": "function_call_output", "call_id": "call_1", "output": "a,b\n1,2"},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
    {
        "role": "user",
        "content": [{"type": "input_text", "text": "and this"}, {"type": "input_image", "image_url": "x"}],
    },
    {"type": "compaction", "encrypted_content": "opaque=="},
    {"role": "assistant", "content": "plain"},
    {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def session(store: JournalStore) -> WaybookSession:
    return WaybookSession("conversation-1", store)


def journal_bodies(session: WaybookSession) -> list[Any]:
    with session.store.open(session.journal_id) as journal:
        return [record.body for record in journal.read()]


# --- items ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: str(i.get("type") or i.get("role")))
def test_every_item_maps_to_a_node_that_gives_back_an_equal_item(item: dict[str, Any]) -> None:
    assert item_of(body_of(item, None)) == item


def test_common_items_become_waybook_messages_so_exports_read_them() -> None:
    kinds = [type(body_of(item, None)) for item in ITEMS[:7]]
    assert kinds == [
        UserMessage,
        *[type(body_of(ITEMS[1], None))] * 2,
        AssistantMessage,
        AssistantMessage,
        AssistantMessage,
        ToolResult,
    ]
    refusal = body_of(ITEMS[-1], None)
    assert isinstance(refusal, CustomEntry)
    assert refusal.type == ITEM


# --- the Session protocol ---------------------------------------------------------------------------


def test_a_new_session_is_empty_and_pop_returns_none(session: WaybookSession) -> None:
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None


def test_items_come_back_in_order_and_equal_to_what_was_added(session: WaybookSession) -> None:
    run(session.add_items(ITEMS[:5]))
    run(session.add_items(ITEMS[5:]))
    assert run(session.get_items()) == ITEMS


def test_limit_returns_the_latest_items_in_chronological_order(session: WaybookSession) -> None:
    run(session.add_items(ITEMS))
    assert run(session.get_items(limit=3)) == ITEMS[-3:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.get_items(limit=100)) == ITEMS


def test_session_settings_limit_is_the_default_and_an_explicit_limit_wins(store: JournalStore) -> None:
    session = WaybookSession("s", store, session_settings=SessionSettings(limit=2))
    run(session.add_items(ITEMS[:5]))
    assert run(session.get_items()) == ITEMS[3:5]
    assert run(session.get_items(limit=4)) == ITEMS[1:5]


def test_add_of_nothing_writes_nothing(session: WaybookSession) -> None:
    run(session.add_items([{"role": "user", "content": "x"}]))
    before = journal_bodies(session)
    run(session.add_items([]))
    assert journal_bodies(session) == before


def test_pop_returns_the_latest_item_and_keeps_it_in_the_journal(session: WaybookSession) -> None:
    run(session.add_items(ITEMS[:3]))
    assert run(session.pop_item()) == ITEMS[2]
    assert run(session.pop_item()) == ITEMS[1]
    assert run(session.get_items()) == ITEMS[:1]
    bodies = journal_bodies(session)
    assert [b.reason for b in bodies if isinstance(b, LeafMoved)] == ["openai-agents: pop_item"] * 2
    assert sum(item_of(b) == ITEMS[2] for b in bodies) == 1, "the popped item is still recorded"


def test_adding_after_a_pop_starts_a_branch_and_the_popped_item_stays_on_the_old_one(
    session: WaybookSession,
) -> None:
    run(session.add_items(ITEMS[:2]))
    run(session.pop_item())
    run(session.add_items([ITEMS[3]]))
    assert run(session.get_items()) == [ITEMS[0], ITEMS[3]]
    nodes = [b for b in journal_bodies(session) if b.IS_NODE]
    assert nodes[1].parent == nodes[2].parent, "two children of the first item: two branches"


def test_clear_session_is_a_reset_and_the_history_stays(session: WaybookSession) -> None:
    run(session.add_items(ITEMS[:3]))
    run(session.clear_session())
    assert run(session.get_items()) == []
    run(session.add_items([ITEMS[4]]))
    assert run(session.get_items()) == [ITEMS[4]]
    bodies = journal_bodies(session)
    assert sum(isinstance(b, Reset) for b in bodies) == 1
    assert [item_of(b) for b in bodies if b.IS_NODE] == [*ITEMS[:3], ITEMS[4]]


def test_sessions_with_different_ids_are_isolated(store: JournalStore) -> None:
    first, second = WaybookSession("a", store), WaybookSession("b", store)
    run(first.add_items(ITEMS[:2]))
    run(second.add_items(ITEMS[2:3]))
    assert run(first.get_items()) == ITEMS[:2]
    assert run(second.get_items()) == ITEMS[2:3]


def test_two_objects_with_one_id_share_one_history_and_survive_a_restart(
    store_url_factory: Callable[[], JournalStore],
) -> None:
    store = store_url_factory()
    writer, reader = WaybookSession("shared", store), WaybookSession("shared", store)
    run(writer.add_items(ITEMS[:2]))
    run(reader.add_items(ITEMS[2:4]))
    assert run(writer.get_items()) == ITEMS[:4]
    assert run(writer.pop_item()) == ITEMS[3]
    assert run(reader.get_items()) == ITEMS[:3]
    restarted = WaybookSession("shared", store_url_factory())
    assert run(restarted.get_items()) == ITEMS[:3]


def test_a_batch_with_an_item_that_is_not_json_writes_nothing(session: WaybookSession) -> None:
    run(session.add_items(ITEMS[:1]))
    before = journal_bodies(session)
    with pytest.raises(InvalidRecordError):
        run(session.add_items([ITEMS[1], {"role": "user", "content": object()}]))
    assert journal_bodies(session) == before
    assert run(session.get_items()) == ITEMS[:1]


def test_concurrent_writers_on_one_session_lose_nothing(
    store_url_factory: Callable[[], JournalStore],
) -> None:
    store = store_url_factory()
    writers = [WaybookSession("busy", store) for _ in range(4)]

    def write(n: int) -> None:
        for i in range(10):
            writers[n].add_items_now([{"role": "user", "content": f"{n}-{i}"}])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    items = run(WaybookSession("busy", store).get_items())
    assert sorted(i["content"] for i in items) == sorted(f"{n}-{i}" for n in range(4) for i in range(10))
    for n in range(4):  # each writer's own items stay in its order
        mine = [i["content"] for i in items if i["content"].startswith(f"{n}-")]
        assert mine == [f"{n}-{i}" for i in range(10)]
    with store.open(writers[0].journal_id) as journal:
        assert verify(journal).ok


# --- the Runner ------------------------------------------------------------------------------------


def test_the_runner_carries_history_across_runs_through_the_session(session: WaybookSession) -> None:
    model = ScriptedModel([[assistant_message("Paris.")], [assistant_message("About 2 million.")]])
    agent = Agent(name="geo", model=model)
    first = run(Runner.run(agent, "Capital of France?", session=session))
    second = run(Runner.run(agent, "Population?", session=session))
    assert (first.final_output, second.final_output) == ("Paris.", "About 2 million.")
    sent = model.last_call.input
    assert [i.get("content") for i in sent if i.get("role") == "user"] == [
        "Capital of France?",
        "Population?",
    ]
    items = run(session.get_items())
    assert [i.get("role") for i in items] == ["user", "assistant", "user", "assistant"]


# --- compaction ------------------------------------------------------------------------------------


class FakeCompactionClient:
    """Stands in for AsyncOpenAI: `responses.compact` returns a fixed compacted history."""

    def __init__(self, output: list[dict[str, Any]]) -> None:
        async def compact(**kwargs: Any) -> Any:
            self.requests.append(kwargs)
            return SimpleNamespace(output=output, usage=None)

        self.requests: list[dict[str, Any]] = []
        self.responses = SimpleNamespace(compact=compact)


def test_compaction_replaces_the_history_in_one_atomic_append(session: WaybookSession) -> None:
    history = [{"role": "user", "content": f"q{i}"} for i in range(12)]
    run(session.add_items(history))
    compacted = [{"role": "user", "content": "q11"}, {"type": "compaction", "encrypted_content": "xyz"}]
    wrapper = OpenAIResponsesCompactionSession(
        "conversation-1", session, client=FakeCompactionClient(compacted), compaction_mode="input"
    )
    before = len(journal_bodies(session))
    run(wrapper.run_compaction({"force": True}))
    assert run(session.get_items()) == compacted
    added = journal_bodies(session)[before:]
    assert isinstance(added[0], LeafMoved)
    assert added[0].to_leaf is None
    assert "compaction" in added[0].reason
    assert [item_of(b) for b in added[1:]] == compacted
    assert not any(isinstance(b, Reset) for b in added), "never clear-then-add"
    assert [item_of(b) for b in journal_bodies(session) if b.IS_NODE][:12] == history


def test_a_compaction_snapshot_replaces_its_suffix_only_if_the_session_did_not_change(
    session: WaybookSession,
) -> None:
    run(session.add_items([{"role": "user", "content": f"q{i}"} for i in range(5)]))
    snapshot = run(session._get_compaction_snapshot(3))
    assert snapshot.items == [{"role": "user", "content": f"q{i}"} for i in (2, 3, 4)]
    assert snapshot.complete is False
    summary = [{"type": "compaction", "encrypted_content": "s"}]
    assert run(snapshot.replace_suffix(1, summary)) is True
    assert run(session.get_items()) == [{"role": "user", "content": f"q{i}"} for i in range(3)] + summary
    stale = run(session._get_compaction_snapshot(2))
    run(session.add_items([{"role": "user", "content": "late"}]))
    assert run(stale.replace_suffix(0, summary)) is False
    assert run(session.get_items())[-1] == {"role": "user", "content": "late"}


def test_a_snapshot_can_drop_an_expired_prefix_in_the_same_append(session: WaybookSession) -> None:
    run(session.add_items([{"role": "user", "content": f"q{i}"} for i in range(4)]))
    snapshot = run(session._get_compaction_snapshot(2, prune_prefix=lambda item: item["content"] == "q0"))
    summary = [{"type": "compaction", "encrypted_content": "s"}]
    assert run(snapshot.replace_suffix(0, summary)) is True
    assert run(session.get_items()) == [{"role": "user", "content": "q1"}, *summary]
