"""Issue 44: a LangGraph thread written by `WaybookSaver` reads like any session.

The thread: fixtures/langgraph/generate_saver.py, a tool-calling graph (LangGraph's `ToolNode`) driven
by langchain_core's scripted `FakeMessagesListChatModel`: a system prompt, ten user turns that each call
a tool, usage metadata on every reply, and a fork (`update_state` on a past checkpoint). `saver-store/`
is that thread saved by today's saver, `before-nodes/` by the saver before it wrote session nodes (where
`show --context` printed nothing, `stats` counted 0 turns and `export` wrote 0 rows).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import START, MessagesState, StateGraph

from tests.helpers.cli_runner import waybook
from tests.helpers.langgraph_threads import (
    THREAD_JOURNAL,
    fixture_store,
    generator,
    journal_lines,
    message_view,
)
from waybook.formats.langgraph._database import read_thread
from waybook.formats.langgraph._import import import_langgraph
from waybook.integrations.langgraph import WaybookSaver
from waybook.integrations.langgraph._state import CHECKPOINT
from waybook.journal import InMemoryJournal
from waybook.model import (
    AssistantMessage,
    CustomEntry,
    LeafMoved,
    NewRecord,
    Record,
    ToolResult,
    UserMessage,
    plain_text,
)
from waybook.model._records import Node
from waybook.projections import TreeProjection, context_at, fold
from waybook.stores import JournalStore, open_store


def records_of(store: JournalStore, journal_id: str = THREAD_JOURNAL) -> list[Record]:
    with store.open(journal_id) as journal:
        return list(journal.read())


def path_messages(records: list[Record], node: str | None) -> list[tuple[Any, ...]]:
    """The session nodes on the path to `node`, root first (checkpoint and marker entries aside)."""
    bodies = {r.id: r.body for r in records if isinstance(r.body, Node)}
    out = []
    while node is not None:
        body = bodies[node]
        if not isinstance(body, CustomEntry):
            out.append(message_view(body))
        node = body.parent
    return out[::-1]


# --- the public names, on the fixture store --------------------------------------------------------


def test_show_context_prints_the_conversation_of_the_latest_checkpoint(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    shown = waybook("show", "--context", "--store", url, THREAD_JOURNAL)
    assert shown.returncode == 0, shown.stderr
    assert "You answer questions about CSV files" in shown.stdout
    assert "How many rows does data.csv have?" in shown.stdout
    assert "inspect_table" in shown.stdout
    assert "Actually, count the rows of orders.csv instead." in shown.stdout  # the active branch: the fork
    assert "Summarise all of that" not in shown.stdout  # the abandoned branch is not on it


def test_stats_json_counts_turns_tool_calls_and_the_usage_langgraph_recorded(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    ran = waybook("stats", "--json", "--store", url, THREAD_JOURNAL)
    assert ran.returncode == 0, ran.stderr
    stats = json.loads(ran.stdout)[THREAD_JOURNAL]
    total = stats["total"]
    assert total["turns"] == 11
    assert total["replies"] == 22
    assert total["tool_calls"] == {"inspect_table": 11}
    tokens = total["tokens"]["scripted-model"]
    assert tokens["input_tokens"] == sum(120 + 40 * n for n in range(22))  # ten turns, then the fork's
    assert tokens["input_token_details.cache_read"] == 64 * 22
    cost = stats["cost"]["total"]["tokens"]
    assert cost["cache_read"] == 64 * 22
    assert cost["input"] == tokens["input_tokens"] - 64 * 22


def test_export_openai_writes_a_row_per_branch_the_trainer_format_accepts(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    out = tmp_path / "rows.jsonl"
    ran = waybook(
        "export", "--format", "openai", "--branches", "all", "--store", url, THREAD_JOURNAL, "-o", str(out)
    )
    assert ran.returncode == 0, ran.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[:2] == ["system", "user"]
        assert roles[-1] == "assistant"
        assert any(m.get("tool_calls") for m in row["messages"])
        assert "tool" in roles


def test_search_finds_what_was_said_in_the_thread(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    found = waybook("search", "--store", url, "median", "--json")
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert any(hit["journal"] == THREAD_JOURNAL and hit["role"] == "user" for hit in hits)


def test_view_shows_messages_as_cards_and_checkpoint_values_decoded_never_base64(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    page = tmp_path / "thread.html"
    ran = waybook("view", "--store", url, THREAD_JOURNAL, "-o", str(page))
    assert ran.returncode == 0, ran.stderr
    html = page.read_text()
    assert "And the median?" in html
    assert '["msgpack"' not in html
    assert '"msgpack",' not in html
    assert '"content":"How many rows does data.csv have?"' in html  # the checkpoint's input, decoded


def test_the_fork_is_a_leaf_move_that_says_why(tmp_path: Path) -> None:
    url = fixture_store("saver-store", tmp_path)
    moves = [r.body for r in records_of(open_store(url)) if isinstance(r.body, LeafMoved)]
    assert len(moves) == 1
    assert "continues from checkpoint" in moves[0].reason


# --- the saver's records, live ---------------------------------------------------------------------


def test_every_checkpoint_path_holds_exactly_that_checkpoints_messages(store: JournalStore) -> None:
    with WaybookSaver(store) as saver:
        graph = generator().run_thread(saver, ("first?", "second?", "third?"))
        config: Any = {"configurable": {"thread_id": "support-chat"}}
        checkpoints = list(saver.list(config))
        journal_id = saver.journal_id("support-chat")
    records = records_of(store, journal_id)
    by_checkpoint = {
        r.body.data["id"]: r.id
        for r in records
        if isinstance(r.body, CustomEntry) and r.body.type == CHECKPOINT
    }
    assert len(checkpoints) == len(by_checkpoint) > 10
    for item in checkpoints:
        messages = item.checkpoint["channel_values"].get("messages", [])
        on_path = path_messages(records, by_checkpoint[item.checkpoint["id"]])
        assert [view[0] for view in on_path] == [_kind(m) for m in messages]
        assert [view[3]["langgraph"]["id"] for view in on_path] == [m.id for m in messages]
    assert graph.get_state(config).values["messages"][-1].content.startswith("Answer 4")  # the fork's


def _kind(message: Any) -> str:
    return {
        "human": "UserMessage",
        "ai": "AssistantMessage",
        "tool": "ToolResult",
        "system": "SystemMessage",
    }[message.type]


def test_each_message_is_written_once_in_its_checkpoints_batch(store: JournalStore) -> None:
    with WaybookSaver(store) as saver:
        generator().run_thread(saver, ("first?", "second?"))
        journal_id = saver.journal_id("support-chat")
    records = records_of(store, journal_id)
    ids = [
        r.body.details["langgraph"]["id"]
        for r in records
        if isinstance(r.body, (UserMessage, AssistantMessage, ToolResult))
    ]
    fork_ids = ids[-4:]  # the fork's question, call, result and answer
    assert len(set(ids[:-4])) == len(ids[:-4])
    assert not set(fork_ids) & set(ids[:-4])
    for record in records:
        if isinstance(record.body, (UserMessage, AssistantMessage, ToolResult)):
            nxt = next(
                r
                for r in records
                if r.seq > record.seq and not isinstance(r.body, (UserMessage, AssistantMessage, ToolResult))
            )
            assert isinstance(nxt.body, CustomEntry)
            assert nxt.body.type == CHECKPOINT


def test_an_edited_message_branches_from_the_last_message_both_share(store: JournalStore) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node(
        "echo",
        lambda state: {
            "messages": [AIMessage(content=f"echo {len(state['messages'])}", id=f"a{len(state['messages'])}")]
        },
    )
    builder.add_edge(START, "echo")
    with WaybookSaver(store) as saver:
        graph = builder.compile(checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "edit"}}
        graph.invoke({"messages": [HumanMessage(content="one", id="h1")]}, config)
        graph.invoke({"messages": [HumanMessage(content="two", id="h2")]}, config)
        graph.update_state(
            config, {"messages": [RemoveMessage(id="a3"), HumanMessage(content="two, edited", id="h2")]}
        )
        journal_id = saver.journal_id("edit")
        latest = graph.get_state(config).values["messages"]
    records = records_of(store, journal_id)
    journal = InMemoryJournal()
    journal.append([_new(r) for r in records], expected=journal.head())
    tree = fold(TreeProjection(), journal.read())
    texts = [plain_text(m.content) for m in context_at(journal, tree)]  # type: ignore[union-attr]
    assert texts == [m.content for m in latest]
    moves = [r.body for r in records if isinstance(r.body, LeafMoved)]
    assert any("differ from its parent's" in move.reason for move in moves)


def _new(record: Record) -> NewRecord:
    return NewRecord(id=record.id, at=record.at, body=record.body)


class _XorCipher:
    """A stand-in for AES (LangGraph's `CipherProtocol`): what matters is that the bytes are not clear."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "xor", bytes(b ^ 0x5A for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        return bytes(b ^ 0x5A for b in ciphertext)


def test_an_encrypting_serde_writes_no_message_in_clear(store: JournalStore) -> None:
    serde = EncryptedSerializer(_XorCipher(), JsonPlusSerializer(allowed_msgpack_modules=None))
    with WaybookSaver(store, serde=serde) as saver:
        assert saver.session_nodes is False
        graph = generator().run_thread(saver, ("a secret question?", "another secret?"))
        journal_id = saver.journal_id("support-chat")
        assert graph.get_state({"configurable": {"thread_id": "support-chat"}}).values["messages"]
    written = "".join(repr(r.body) for r in records_of(store, journal_id))
    assert "a secret question?" not in written
    assert not any(isinstance(r.body, UserMessage) for r in records_of(store, journal_id))


# --- the same nodes from a SqliteSaver database ----------------------------------------------------


def test_import_of_a_sqlite_saver_database_gives_the_same_nodes(store: JournalStore, tmp_path: Path) -> None:
    sqlite_saver = pytest.importorskip("langgraph.checkpoint.sqlite")
    with WaybookSaver(store) as saver:
        generator().run_thread(saver, ("first?", "second?", "third?"))
        config: Any = {"configurable": {"thread_id": "support-chat"}}
        tuples = list(reversed(list(saver.list(config))))
        journal_id = saver.journal_id("support-chat")
    database = tmp_path / "checkpoints.db"
    with sqlite3.connect(database, check_same_thread=False) as connection:
        copy = sqlite_saver.SqliteSaver(connection)
        for item in tuples:  # the same checkpoints, message objects and all, into LangGraph's own saver
            parent = item.parent_config or {
                "configurable": {"thread_id": "support-chat", "checkpoint_ns": ""}
            }
            copy.put(parent, item.checkpoint, item.metadata, item.checkpoint["channel_versions"])
    thread, checkpoints = read_thread(database, "support-chat")
    imported = import_langgraph(thread, checkpoints)
    ours = records_of(store, journal_id)
    ours_at = {
        r.body.data["id"]: r.id for r in ours if isinstance(r.body, CustomEntry) and r.body.type == CHECKPOINT
    }
    imported_records = _records(imported.records)
    for checkpoint_id, end in imported.ends.items():
        assert path_messages(imported_records, end) == path_messages(ours, ours_at[checkpoint_id]), (
            checkpoint_id
        )


def _records(new: Any) -> list[Record]:
    journal = InMemoryJournal()
    journal.append(list(new), expected=journal.head())
    return list(journal.read())


# --- threads saved before the saver wrote nodes ----------------------------------------------------


def test_a_thread_saved_before_nodes_is_opaque_until_derived_then_reads_as_a_session(tmp_path: Path) -> None:
    url = fixture_store("before-nodes", tmp_path)
    before = json.loads(waybook("stats", "--json", "--store", url, THREAD_JOURNAL).stdout)[THREAD_JOURNAL]
    assert before["total"]["turns"] == 0  # the issue, as the old saver left it
    lines = journal_lines(url)
    ran = waybook("langgraph", "derive", "--store", url, "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"derived": {THREAD_JOURNAL: 53}}
    after = journal_lines(url)
    assert after[: len(lines)] == lines
    assert len(after) > len(lines)
    assert waybook("verify", "--store", url, THREAD_JOURNAL).returncode == 0
    stats = json.loads(waybook("stats", "--json", "--store", url, THREAD_JOURNAL).stdout)[THREAD_JOURNAL]
    assert stats["total"]["turns"] == 11
    assert stats["total"]["tool_calls"] == {"inspect_table": 11}
    shown = waybook("show", "--context", "--store", url, THREAD_JOURNAL).stdout
    assert "Actually, count the rows of orders.csv instead." in shown
    again = waybook("langgraph", "derive", "--store", url, "--json")
    assert json.loads(again.stdout) == {"derived": {THREAD_JOURNAL: 0}}
    assert journal_lines(url) == after  # twice is once


def test_a_derived_thread_continues_under_the_saver_with_its_whole_context(tmp_path: Path) -> None:
    url = fixture_store("before-nodes", tmp_path)
    assert waybook("langgraph", "derive", "--store", url).returncode == 0
    store = open_store(url)
    with WaybookSaver(store) as saver:
        graph = generator().graph_for(saver, generator().script(("one more?",)))
        config: Any = {"configurable": {"thread_id": "support-chat"}}
        graph.invoke({"messages": [HumanMessage(content="one more?")]}, config)
        expected = graph.get_state(config).values["messages"]
    records = records_of(store)
    journal = InMemoryJournal()
    journal.append([_new(r) for r in records], expected=journal.head())
    tree = fold(TreeProjection(), journal.read())
    context = context_at(journal, tree)
    assert len(context) == len(expected)
    assert plain_text(context[-1].content) == expected[-1].content  # type: ignore[union-attr]


def test_derive_names_a_journal_the_store_does_not_hold_as_a_usage_error(tmp_path: Path) -> None:
    url = fixture_store("before-nodes", tmp_path)
    ran = waybook("langgraph", "derive", "--store", url, "no-such-thread")
    assert ran.returncode == 2
    assert "no LangGraph thread 'no-such-thread'" in ran.stderr
