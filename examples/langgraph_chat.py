"""LangGraph on waybook: a chat graph that resumes after a restart, forks from an earlier turn, and is
audited with `waybook tree` and `waybook export`. The model is scripted: no network, no API key.

Run: python examples/langgraph_chat.py [STORE_DIR]     (needs `pip install 'waybook[langgraph]'`)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages

from waybook.integrations.langgraph import WaybookSaver
from waybook.stores import open_store

REPLIES = {
    "hello": "Hi! What shall we plan?",
    "a trip to Lisbon": "Pack light; it is hilly.",
    "a trip to Oslo": "Pack a coat.",
    "how long?": "Four days is enough.",
}


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def scripted_model(state: Chat) -> dict[str, Any]:
    """Stands in for an LLM: answers from a table, deterministically."""
    question = str(state["messages"][-1].content)
    return {"messages": [AIMessage(REPLIES.get(question, "I see."))]}


def build(checkpointer: WaybookSaver) -> Any:
    builder = StateGraph(Chat)
    builder.add_node("model", scripted_model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=checkpointer)


def transcript(graph: Any, config: Any) -> list[str]:
    return [f"{m.type}: {m.content}" for m in graph.get_state(config).values["messages"]]


def main(directory: str) -> None:
    config = {"configurable": {"thread_id": "trip-planning"}}

    # First process: two turns, then the process "exits" (the store and saver are closed).
    with open_store(f"file:{directory}/store") as store, WaybookSaver(store) as saver:
        graph = build(saver)
        graph.invoke({"messages": [HumanMessage("hello")]}, config)
        graph.invoke({"messages": [HumanMessage("a trip to Lisbon")]}, config)

    # A new process: a fresh store and saver resume the thread where it stopped.
    with open_store(f"file:{directory}/store") as store, WaybookSaver(store) as saver:
        graph = build(saver)
        graph.invoke({"messages": [HumanMessage("how long?")]}, config)
        print("after the restart:", *transcript(graph, config), sep="\n  ")

        # Fork: go back to the state after the first answer and ask something else.
        first_answer = next(
            s for s in graph.get_state_history(config) if len(s.values["messages"]) == 2 and not s.next
        )
        fork = graph.update_state(
            first_answer.config, {"messages": [HumanMessage("a trip to Oslo")]}, as_node=START
        )
        graph.invoke(None, fork)
        print("on the fork:", *transcript(graph, config), sep="\n  ")
        journal = saver.journal_id("trip-planning")

    # Audit: the thread is one journal; nothing was rewritten, the fork is a leaf move.
    waybook = [sys.executable, "-m", "waybook"]
    in_store = ["--store", f"file:{directory}/store", journal]
    subprocess.run([*waybook, "verify", *in_store], check=True)
    subprocess.run([*waybook, "tree", *in_store], check=True)
    archive = f"{directory}/trip-planning.archive.jsonl"
    subprocess.run([*waybook, "export", *in_store, "--format", "archival", "-o", archive], check=True)
    print("archival export:", archive)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="waybook-langgraph-"))
