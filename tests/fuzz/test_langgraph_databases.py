"""Hostile LangGraph databases: real SqliteSaver files whose columns hold garbage (random msgpack, wrong
types, NULLs, unknown serialization types, odd ids) import or are refused with a typed error."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.garbage import mutated
from waybook.formats.langgraph import import_langgraph
from waybook.formats.langgraph._database import read_thread
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, JournalError

ormsgpack = pytest.importorskip("ormsgpack")
sqlite_saver = pytest.importorskip("langgraph.checkpoint.sqlite")

MESSAGE = {
    "content": "hi",
    "additional_kwargs": {},
    "response_metadata": {"model_name": "m"},
    "type": "ai",
    "name": None,
    "id": "a1",
    "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}],
    "invalid_tool_calls": [],
}
STATE = {"v": 4, "ts": "2026-12-01T11:06:00.000000+00:00", "id": "1", "channel_values": {"messages": []}}


def _packable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _packable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_packable(v) for v in value]
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        return str(value)
    return value


@st.composite
def checkpoint_rows(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    rows = []
    for number in range(draw(st.integers(1, 3))):
        message = draw(mutated(MESSAGE))
        state = draw(mutated(STATE))
        try:
            if isinstance(state, dict) and isinstance(state.get("channel_values"), dict):
                code = draw(st.sampled_from([2, 5, 0, 7, 9]))
                parts = ("langchain_core.messages.ai", "AIMessage", _packable(message), "model_validate_json")
                packed = [ormsgpack.Ext(code, ormsgpack.packb(parts))]
                values = {**state["channel_values"], "messages": packed}
                state = {**state, "channel_values": values}  # a new dict: a drawn value may be shared
            blob: Any = ormsgpack.packb(_packable(state))
        except (TypeError, ValueError, OverflowError, RecursionError):  # garbage msgpack cannot hold
            blob = b"\xc1"
        kind = draw(st.sampled_from(["msgpack", "msgpack", "json", "pickle", "null", "bytes", "x", None]))
        blob = draw(st.sampled_from([blob, blob, None, 3, "text", draw(st.binary(max_size=40))]))
        metadata = draw(
            st.sampled_from(
                [b"{}", None, b"[1]", b'{"step": NaN}', b"{", 7, b'{"lc": 1, "type": "secret", "id": ["X"]}']
            )
        )
        checkpoint_id = draw(st.sampled_from([f"c{number}", f"c{number}", 5, None]))
        parent = draw(st.sampled_from([None, f"c{number - 1}", "nowhere", 3]))
        rows.append((checkpoint_id, parent, kind, blob, metadata))
    return rows


def database(path: Path, rows: list[tuple[Any, ...]]) -> Path:
    connection = sqlite3.connect(path, check_same_thread=False)
    sqlite_saver.SqliteSaver(connection).setup()
    for checkpoint_id, parent, kind, blob, metadata in rows:
        connection.execute(
            "INSERT OR REPLACE INTO checkpoints VALUES ('t', '', ?, ?, ?, ?, ?)",
            (checkpoint_id if checkpoint_id is not None else "c0", parent, kind, blob, metadata),
        )
    connection.commit()
    connection.close()
    return path


def check(path: Path) -> None:
    error = ""
    try:
        thread, checkpoints = read_thread(path, None)
        result = import_langgraph(thread, checkpoints)
        InMemoryJournal("lg").append(list(result.records), expected=GENESIS)
    except JournalError as exc:
        error = str(exc)
    assert "\n" not in error


@settings(max_examples=40)
@given(rows=checkpoint_rows())
def test_a_hostile_langgraph_database_imports_or_is_refused_typed(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[Any, ...]]
) -> None:
    check(database(tmp_path_factory.mktemp("lg") / "x.db", rows))


@pytest.mark.slow
@settings(max_examples=600)
@given(rows=checkpoint_rows())
def test_many_hostile_langgraph_databases_import_or_are_refused_typed(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[Any, ...]]
) -> None:
    check(database(tmp_path_factory.mktemp("lg") / "x.db", rows))
