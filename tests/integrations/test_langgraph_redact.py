"""`WaybookSaver(store, redact=True)` (issue 46): channel values, pending writes, metadata and session
nodes are masked before the saver serializes or stores them, so no secret reaches the store's bytes (nor
the base64 values inside them), and the saver still round-trips: a graph resumes from its masked state,
and LangGraph's own conformance suite passes with masking on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, decoded_values, raw_bytes
from waybook.integrations.langgraph import WaybookSaver
from waybook.journal import verify
from waybook.model import CustomEntry, InvalidArgumentError, UserMessage
from waybook.stores import open_store


def graph(checkpointer: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1].content
        call = {"name": "bash", "args": {"cmd": f"psql {DB.text}"}, "id": "c1", "type": "tool_call"}
        return {"messages": [AIMessage(f"echo: {last}", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    return builder.compile(checkpointer=checkpointer)


CFG = {"configurable": {"thread_id": "t"}}


def converse(checkpointer: Any) -> Any:
    chat = graph(checkpointer)
    chat.invoke({"messages": [HumanMessage(f"deploy with {TOKEN.text}")]}, CFG)
    chat.invoke({"messages": [HumanMessage("again")]}, CFG)
    return chat


def stored(tmp_path: Path, url: str) -> bytes:
    """The store's raw bytes and every serialized value in its records, decoded."""
    data = raw_bytes(tmp_path)
    with open_store(url) as store:
        for info in store.list(limit=100):
            with store.open(info.journal_id) as journal:
                assert verify(journal).ok
                for record in journal.read():
                    data += decoded_values(getattr(record.body, "data", None))
    return data


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_nor_its_serialized_values(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSaver(store, redact=True))
    data = stored(tmp_path, STORE_URLS[scheme](tmp_path))
    assert TOKEN.core.encode() not in data
    assert DB.core.encode() not in data
    assert b"[REDACTED:github-token]" in data


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSaver(store))
    assert TOKEN.core.encode() in stored(tmp_path, STORE_URLS[scheme](tmp_path))  # the test above can fail


def test_the_session_nodes_say_what_was_masked_where(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path / 'store'}") as store:
        saver = WaybookSaver(store, redact=True)
        converse(saver)
        with store.open(saver.journal_id("t")) as journal:
            records = list(journal.read())
    user = next(r.body for r in records if isinstance(r.body, UserMessage))
    assert user.details is not None
    assert user.details["waybook.redacted"] == [
        {"field": "content", "block": 0, "kind": "github-token", "count": 1}
    ]
    assert any(isinstance(r.body, CustomEntry) for r in records)


def test_a_graph_resumes_from_its_masked_state_as_from_langgraphs_saver(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'store.db'}"
    with open_store(url) as store:
        converse(WaybookSaver(store, redact=True))
    reference = converse(InMemorySaver())
    with open_store(url) as store:
        restarted = graph(WaybookSaver(store, redact=True))
        ours, theirs = restarted.get_state(CFG), reference.get_state(CFG)
        contents = [m.content for m in ours.values["messages"]]
        assert contents == [
            c.replace(TOKEN.text, "[REDACTED:github-token]")
            for c in (m.content for m in theirs.values["messages"])
        ]
        command = ours.values["messages"][1].tool_calls[0]["args"]["cmd"]
        assert DB.core not in command
        assert "[REDACTED:url-password]" in command
        assert len(list(restarted.get_state_history(CFG))) == len(list(reference.get_state_history(CFG)))
        restarted.invoke({"messages": [HumanMessage("third")]}, CFG)
        assert [m.content for m in restarted.get_state(CFG).values["messages"]][-2:] == [
            "third",
            "echo: third",
        ]


def test_a_redact_option_that_is_not_one_is_refused() -> None:
    with open_store("memory:") as store, pytest.raises(InvalidArgumentError, match="WaybookSaver's redact"):
        WaybookSaver(store, redact="yes")  # type: ignore[arg-type]


def test_langgraphs_conformance_suite_passes_with_masking_on(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.checkpoint.conformance")
    from langgraph.checkpoint.conformance import checkpointer_test, validate

    @checkpointer_test(name="WaybookSaver(redact=True)")
    async def masking_saver() -> AsyncIterator[WaybookSaver]:
        with WaybookSaver(open_store(f"sqlite:{tmp_path / 'store.db'}"), redact=True) as saver:
            yield saver

    report = asyncio.run(validate(masking_saver))
    failures = {name: result.failures for name, result in report.results.items() if result.passed is not True}
    assert not failures, failures
