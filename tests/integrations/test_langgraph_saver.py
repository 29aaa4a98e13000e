"""WaybookSaver beyond the conformance suite: stale writers, growth, forks, deletion, restarts, graphs."""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from waybook.integrations.langgraph import StaleThreadError, WaybookSaver
from waybook.integrations.langgraph._state import CHECKPOINT, HIDDEN, WRITES
from waybook.journal import verify
from waybook.model import Annotation, CustomEntry, LeafMoved, Reset
from waybook.stores import JournalStore


def config(thread: str, checkpoint_id: str | None = None, ns: str = "") -> Any:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def put(saver: WaybookSaver, thread: str, parent: str | None, values: dict[str, Any], step: int = 0) -> Any:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {k: saver.get_next_version(None, None) for k in values}
    return saver.put(
        config(thread, parent), checkpoint, {"source": "loop", "step": step}, checkpoint["channel_versions"]
    )


def journal_records(store: JournalStore, thread: str, ns: str = "") -> list[Any]:
    from waybook.integrations._stores import journal_id_for

    with store.open(journal_id_for("langgraph", thread, ns)) as journal:
        return list(journal.read())


# --- two writers ------------------------------------------------------------------------------------


def test_a_second_writer_on_one_thread_is_refused_as_stale_and_nothing_is_written(
    store: JournalStore,
) -> None:
    first, second = WaybookSaver(store), WaybookSaver(store)
    c1 = put(first, "t", None, {"x": 1})
    # both writers read the thread at c1
    assert first.get_tuple(config("t")).checkpoint["id"] == c1["configurable"]["checkpoint_id"]
    assert second.get_tuple(config("t")).checkpoint["id"] == c1["configurable"]["checkpoint_id"]
    put(first, "t", c1["configurable"]["checkpoint_id"], {"x": 2}, step=1)
    before = journal_records(store, "t")
    with pytest.raises(StaleThreadError, match="another writer") as refused:
        put(second, "t", c1["configurable"]["checkpoint_id"], {"x": 3}, step=1)
    assert refused.value.actual.seq == before[-1].seq
    assert journal_records(store, "t") == before
    # pending writes of a stale writer are refused the same way
    with pytest.raises(StaleThreadError):
        second.put_writes(c1, [("x", 9)], "task-1")
    assert journal_records(store, "t") == before
    # once it has read the thread again, the second writer continues from the latest checkpoint
    latest = second.get_tuple(config("t"))
    put(second, "t", latest.checkpoint["id"], {"x": 3}, step=2)
    assert first.get_tuple(config("t")).checkpoint["channel_values"] == {"x": 3}


def test_langgraphs_own_in_memory_saver_lets_the_second_writer_win_silently() -> None:
    """The behaviour WaybookSaver refuses, shown on LangGraph's saver for contrast."""
    saver = InMemorySaver()
    checkpoint = empty_checkpoint()
    c1 = saver.put(config("t"), checkpoint, {"step": 0}, {})
    for value in (2, 3):
        later = empty_checkpoint()
        later["channel_values"], later["channel_versions"] = {"x": value}, {"x": str(value)}
        saver.put(c1, later, {"step": 1}, {"x": str(value)})
    assert saver.get_tuple(config("t")).checkpoint["channel_values"] == {"x": 3}


# --- what a checkpoint stores ---------------------------------------------------------------------


def test_a_growing_list_is_stored_as_the_elements_it_gained(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    messages: list[Any] = []
    parent = None
    for step in range(200):
        messages = [
            *messages,
            HumanMessage(f"question {step}", id=f"h{step}"),
            AIMessage(f"answer {step}", id=f"a{step}"),
        ]
        parent = put(
            saver, "t", parent and parent["configurable"]["checkpoint_id"], {"messages": messages}, step
        )
    refs = [
        r.body.data["values"]["messages"]
        for r in journal_records(store, "t")
        if isinstance(r.body, CustomEntry) and r.body.type == CHECKPOINT
    ]
    whole = [ref for ref in refs if "set" in ref]
    assert 2 <= len(whole) <= 4, "whole copies only when the list doubled"
    assert all(ref["added"] == 2 for ref in refs if "add" in ref)
    assert WaybookSaver(store).get_tuple(config("t")).checkpoint["channel_values"]["messages"] == messages
    # every earlier checkpoint still reads back exactly
    history = list(WaybookSaver(store).list(config("t")))
    assert [len(t.checkpoint["channel_values"]["messages"]) for t in history] == list(range(400, 0, -2))


def test_a_list_that_was_rewritten_is_stored_whole(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    c1 = put(saver, "t", None, {"items": [1, 2, 3]})
    put(saver, "t", c1["configurable"]["checkpoint_id"], {"items": [1, 9, 3, 4]}, 1)
    refs = [
        r.body.data["values"]["items"] for r in journal_records(store, "t") if isinstance(r.body, CustomEntry)
    ]
    assert ["set" in ref for ref in refs] == [True, True]
    assert saver.get_tuple(config("t")).checkpoint["channel_values"]["items"] == [1, 9, 3, 4]


# --- forks, writes, deletion ------------------------------------------------------------------------


def test_a_fork_is_a_leaf_move_and_the_abandoned_branch_stays(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    c1 = put(saver, "t", None, {"x": [1]})
    c2 = put(saver, "t", c1["configurable"]["checkpoint_id"], {"x": [1, 2]}, 1)
    c3 = put(saver, "t", c1["configurable"]["checkpoint_id"], {"x": [1, 3]}, 1)
    records = journal_records(store, "t")
    moves = [r.body for r in records if isinstance(r.body, LeafMoved)]
    assert len(moves) == 1
    assert "continues from checkpoint " + c1["configurable"]["checkpoint_id"] in moves[0].reason
    assert saver.get_tuple(c2).checkpoint["channel_values"] == {"x": [1, 2]}
    assert saver.get_tuple(c3).checkpoint["channel_values"] == {"x": [1, 3]}
    assert (
        saver.get_tuple(c3).parent_config["configurable"]["checkpoint_id"]
        == c1["configurable"]["checkpoint_id"]
    )
    assert verify(store.open(records[0].body.journal)).ok


def test_pending_writes_attach_to_their_checkpoint_without_moving_the_leaf(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    c1 = put(saver, "t", None, {"x": 1})
    saver.put_writes(c1, [("x", 2), ("y", "a")], "task-1", "~__pregel_pull, node")
    saver.put_writes(c1, [("x", 2)], "task-1")  # a retry writes nothing
    c2 = put(saver, "t", c1["configurable"]["checkpoint_id"], {"x": 2}, 1)
    records = journal_records(store, "t")
    notes = [r.body for r in records if isinstance(r.body, Annotation)]
    assert [n.type for n in notes] == [WRITES]
    assert not any(isinstance(r.body, LeafMoved) for r in records)
    assert saver.get_tuple(c1).pending_writes == [("task-1", "x", 2), ("task-1", "y", "a")]
    assert saver.get_tuple(c2).pending_writes == []


def test_writes_that_arrive_before_their_checkpoint_are_written_with_it(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    c1 = put(saver, "t", None, {"x": 1})
    checkpoint = empty_checkpoint()
    saver.put_writes(config("t", checkpoint["id"]), [("x", 5)], "task-early")
    saver.put(c1, checkpoint, {"step": 1}, {})
    records = journal_records(store, "t")
    assert isinstance(records[-2].body, CustomEntry)
    assert isinstance(records[-1].body, Annotation)
    assert records[-2].seq + 1 == records[-1].seq
    assert saver.get_tuple(config("t")).pending_writes == [("task-early", "x", 5)]


def test_delete_thread_appends_a_reset_keeps_the_history_and_the_thread_can_start_again(
    store: JournalStore,
) -> None:
    saver = WaybookSaver(store)
    c1 = put(saver, "t", None, {"x": 1})
    put(saver, "t", None, {"x": 1}, 0) if False else None
    saver.delete_thread("t")
    assert saver.get_tuple(config("t")) is None
    assert list(saver.list(config("t"))) == []
    records = journal_records(store, "t")
    assert isinstance(records[-1].body, Reset)
    assert any(
        isinstance(r.body, CustomEntry) and r.body.data["id"] == c1["configurable"]["checkpoint_id"]
        for r in records
    )
    put(saver, "t", None, {"x": 2})
    assert saver.get_tuple(config("t")).checkpoint["channel_values"] == {"x": 2}


def test_purge_on_delete_erases_the_threads_journals(store: JournalStore) -> None:
    saver = WaybookSaver(store, purge_on_delete=True)
    put(saver, "t", None, {"x": 1})
    put(saver, "t", None, {"x": 1}, 0)
    saver.delete_thread("t")
    assert saver.get_tuple(config("t")) is None
    assert list(store.list(metadata={"langgraph_thread": "t"})) == []


def test_prune_hides_and_keeps_every_record(store: JournalStore) -> None:
    saver = WaybookSaver(store)
    parent = None
    for step in range(3):
        parent = put(saver, "t", parent and parent["configurable"]["checkpoint_id"], {"x": [step]}, step)
    saver.prune(["t"], strategy="keep_latest")
    assert [t.checkpoint["channel_values"] for t in saver.list(config("t"))] == [{"x": [2]}]
    hidden = [
        r.body
        for r in journal_records(store, "t")
        if isinstance(r.body, Annotation) and r.body.type == HIDDEN
    ]
    assert len(hidden) == 2


# --- restarts and real graphs ----------------------------------------------------------------------


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turns: Annotated[int, operator.add]


def scripted_graph(checkpointer: Any) -> Any:
    def model(state: Chat) -> dict[str, Any]:
        last = state["messages"][-1].content
        return {"messages": [AIMessage(f"echo: {last}")], "turns": 1}

    builder = StateGraph(Chat)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=checkpointer)


def run_conversation(checkpointer: Any, thread: str) -> Any:
    graph = scripted_graph(checkpointer)
    cfg = {"configurable": {"thread_id": thread}}
    graph.invoke({"messages": [HumanMessage("hello")], "turns": 0}, cfg)
    graph.invoke({"messages": [HumanMessage("again")]}, cfg)
    return graph


def test_a_graph_resumes_after_a_restart_with_the_same_state_as_langgraphs_saver(
    store_url_factory: Callable[[], JournalStore],
) -> None:
    store = store_url_factory()
    run_conversation(WaybookSaver(store), "t")
    reference = run_conversation(InMemorySaver(), "t")
    restarted = scripted_graph(WaybookSaver(store_url_factory()))
    cfg = {"configurable": {"thread_id": "t"}}
    ours, theirs = restarted.get_state(cfg), reference.get_state(cfg)
    assert [m.content for m in ours.values["messages"]] == [m.content for m in theirs.values["messages"]]
    assert ours.values["turns"] == theirs.values["turns"] == 2
    assert len(list(restarted.get_state_history(cfg))) == len(list(reference.get_state_history(cfg)))
    restarted.invoke({"messages": [HumanMessage("third")]}, cfg)
    assert [m.content for m in restarted.get_state(cfg).values["messages"]][-2:] == ["third", "echo: third"]


def test_a_graph_forked_from_an_earlier_checkpoint_keeps_both_branches(store: JournalStore) -> None:
    graph = run_conversation(WaybookSaver(store), "t")
    cfg = {"configurable": {"thread_id": "t"}}
    after_first = next(s for s in graph.get_state_history(cfg) if s.values.get("turns") == 1 and not s.next)
    forked = graph.update_state(after_first.config, {"messages": [HumanMessage("instead")]}, as_node=START)
    graph.invoke(None, forked)
    contents = [m.content for m in graph.get_state(cfg).values["messages"]]
    assert contents == ["hello", "echo: hello", "instead", "echo: instead"]
    assert any(isinstance(r.body, LeafMoved) for r in journal_records(store, "t"))


def test_the_async_api_runs_a_graph_the_same_way(store: JournalStore) -> None:
    graph = scripted_graph(WaybookSaver(store))
    cfg = {"configurable": {"thread_id": "a"}}

    async def converse() -> Any:
        await graph.ainvoke({"messages": [HumanMessage("hi")], "turns": 0}, cfg)
        await graph.ainvoke({"messages": [HumanMessage("bye")]}, cfg)
        return await graph.aget_state(cfg)

    state = asyncio.run(converse())
    assert [m.content for m in state.values["messages"]] == ["hi", "echo: hi", "bye", "echo: bye"]


OTHER_PROCESS = """
import sys
from langgraph.checkpoint.base import empty_checkpoint
from waybook.integrations.langgraph import WaybookSaver
from waybook.stores import open_store

with open_store(sys.argv[1]) as store, WaybookSaver(store) as saver:
    latest = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    saver.put(latest.config, empty_checkpoint(), {"step": 1, "writer": "other process"}, {})
"""


@pytest.mark.parametrize("scheme", ["file", "sqlite"])
def test_a_writer_in_another_process_makes_this_writers_next_put_stale(scheme: str, tmp_path: Any) -> None:
    import subprocess
    import sys

    from waybook.stores import open_store

    url = f"file:{tmp_path / 'store'}" if scheme == "file" else f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store, WaybookSaver(store) as saver:
        c1 = put(saver, "t", None, {"x": 1})
        subprocess.run([sys.executable, "-c", OTHER_PROCESS, url], check=True)
        with pytest.raises(StaleThreadError):
            put(saver, "t", c1["configurable"]["checkpoint_id"], {"x": 2}, step=1)
        latest = saver.get_tuple(config("t"))
        assert latest.metadata["writer"] == "other process"
        put(saver, "t", latest.checkpoint["id"], {"x": 2}, step=2)
        assert [t.metadata["step"] for t in saver.list(config("t"))] == [2, 1, 0]
