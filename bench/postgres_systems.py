"""The three systems of the PostgreSQL bench (bench/postgres.py), one append at a time: waybook's
PostgreSQL store, raw psycopg inserts of the same bytes (the floor) and LangGraph's PostgresSaver; the
single-process rows that drive them (appends per second, the sessions x records scenario)."""

from __future__ import annotations

import itertools
import json
import secrets
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stores import message  # noqa: E402
from waybook.codecs._wire import seal  # noqa: E402
from waybook.model import GENESIS, AssistantMessage, NewRecord, UserMessage, text  # noqa: E402
from waybook.stores import open_store  # noqa: E402

THREAD = 50
AT = "2026-12-01T12:00:00.000Z"
"""Messages per conversation in the append rows."""


# --- the three systems, one append at a time ----------------------------------------------------------


class Waybook:
    name = "waybook"

    def __init__(self, url: str) -> None:
        self.store = open_store(url)
        self.journal: Any = None
        self.head = GENESIS
        self.leaf: str | None = None
        self.ids = (f"m{i}" for i in itertools.count())

    def new_thread(self, thread: str) -> None:
        self.journal = self.store.create(thread)
        self.head, self.leaf = self.journal.head(), None

    def append(self, i: int, turn: bool) -> None:
        question = NewRecord(
            id=next(self.ids), at=AT, body=UserMessage(parent=self.leaf, content=text(message(0, i)))
        )
        batch = [question]
        if turn:
            reply = AssistantMessage(parent=question.id, content=text(message(1, i)), stop_reason="end_turn")
            batch.append(NewRecord(id=next(self.ids), at=AT, body=reply))
        result = self.journal.append(batch, expected=self.head)
        self.head, self.leaf = result.head, batch[-1].id

    def close(self) -> None:
        self.store.close()


class Raw:
    """The floor: one table, one INSERT (or one two-row INSERT) per commit; no chain check, no rules. The
    rows are the bytes waybook stores for the same records: their sealed lines, salted and padded as in
    a journal of schema 2 (until 2026-12-07 they were schema 1's lines, 104 bytes shorter a record
    here: the floor stored less than waybook did)."""

    name = "raw psycopg"

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS raw_messages (id bigserial PRIMARY KEY, session text NOT NULL,"
            " data text NOT NULL)"
        )
        self.conn.execute("CREATE INDEX IF NOT EXISTS raw_by_session ON raw_messages (session, id)")
        self.thread = ""
        self.prev = GENESIS.digest

    def new_thread(self, thread: str) -> None:
        self.thread = thread
        self._insert([{"kind": "header", "session": thread}])

    def append(self, i: int, turn: bool) -> None:
        parent = f"m{i - 1}" if i else None
        question = NewRecord(id=f"m{i}", at=AT, body=UserMessage(parent=parent, content=text(message(0, i))))
        lines = [self._sealed(i + 2, question)]
        if turn:
            reply = AssistantMessage(parent=question.id, content=text(message(1, i)), stop_reason="end_turn")
            lines.append(self._sealed(i + 3, NewRecord(id=f"r{i}", at=AT, body=reply)))
        self._insert_lines(lines)

    def _sealed(self, seq: int, new: NewRecord) -> str:
        """The line waybook's store writes for `new` in a new journal (schema 2: salted, its content
        padded to whole SHA-256 blocks so that it can be erased), chained to the line before."""
        record, line = seal(seq, new, self.prev, None, secrets.token_hex(16))
        self.prev = record.digest
        return line.decode()

    def _insert(self, rows: list[dict[str, str]]) -> None:
        self._insert_lines([json.dumps(row) for row in rows])

    def _insert_lines(self, lines: list[str]) -> None:
        values = ", ".join(["(%s, %s)"] * len(lines))
        params: list[str] = []
        for line in lines:
            params += [self.thread, line]
        self.conn.execute(f"INSERT INTO raw_messages (session, data) VALUES {values}".encode(), params)

    def close(self) -> None:
        self.conn.close()


class LangGraph:
    """LangGraph's PostgresSaver: one checkpoint per step. `full`: each checkpoint holds the thread's
    messages so far (what an add_messages channel stores); otherwise only the new ones."""

    name = "LangGraph PostgresSaver"

    def __init__(self, url: str, *, full: bool = True, setup: bool = True) -> None:
        from langgraph.checkpoint.postgres import PostgresSaver

        self.conn = psycopg.connect(url, autocommit=True, prepare_threshold=0)
        self.saver = PostgresSaver(self.conn)  # type: ignore[arg-type]
        if setup:  # its migrations are not safe to run from several processes at once
            self.saver.setup()
        self.full = full
        self.config: dict[str, Any] = {}
        self.messages: list[Any] = []
        self.version = 0

    def new_thread(self, thread: str) -> None:
        self.config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        self.messages = []
        self.version = 0

    def append(self, i: int, turn: bool) -> None:
        from langchain_core.messages import AIMessage, HumanMessage
        from langgraph.checkpoint.base import empty_checkpoint

        new: list[Any] = [HumanMessage(message(0, i))]
        if turn:
            new.append(AIMessage(message(1, i)))
        self.messages = [*self.messages, *new] if self.full else new
        self.version += 1
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": self.messages}
        checkpoint["channel_versions"] = {"messages": self.version}
        metadata: Any = {"source": "loop", "step": self.version}
        self.config = self.saver.put(self.config, checkpoint, metadata, {"messages": self.version})  # type: ignore[arg-type]

    def read_thread(self, thread: str) -> int:
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        return sum(len(c.checkpoint["channel_values"].get("messages", [])) for c in self.saver.list(config))

    def close(self) -> None:
        self.conn.close()


SYSTEMS: dict[str, Callable[[str], Any]] = {"waybook": Waybook, "raw": Raw, "langgraph": LangGraph}


def appends(make: Callable[[str], Any], url: str, count: int, turn: bool) -> float:
    """Committed appends per second, in threads of THREAD messages."""
    system = make(url)
    try:
        started = time.perf_counter()
        for i in range(count):
            if i % (THREAD // (2 if turn else 1)) == 0:
                system.new_thread(f"t-{uuid.uuid4().hex[:12]}")
            system.append(i, turn)
        return count / (time.perf_counter() - started)
    finally:
        system.close()


# --- the 200 x 500 scenario ----------------------------------------------------------------------------


def raw_scenario(url: str, sessions: int, records: int) -> dict[str, float]:
    ids = [f"session-{s:04d}" for s in range(sessions)]
    started = time.perf_counter()
    raw = Raw(url)
    for journal_id in ids:
        raw.thread = journal_id
        raw._insert([{"kind": "header", "session": journal_id}])
    for i in range(records - 1):
        for s, journal_id in enumerate(ids):
            raw.thread = journal_id
            raw._insert([{"role": "user" if i % 2 == 0 else "assistant", "content": message(s, i)}])
    raw.close()
    write = time.perf_counter() - started
    started = time.perf_counter()
    count = 0
    with psycopg.connect(url) as conn:
        for journal_id in ids:
            rows = conn.execute("SELECT data FROM raw_messages WHERE session = %s ORDER BY id", (journal_id,))
            count += sum(1 for (data,) in rows if json.loads(data))
    reopen = time.perf_counter() - started
    assert count == sessions * records, count
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        fed = sum(
            1 for (data,) in conn.execute("SELECT data FROM raw_messages ORDER BY id") if json.loads(data)
        )
    feed = time.perf_counter() - started
    assert fed == sessions * records
    return {"write": write, "reopen": reopen, "feed": feed}


def langgraph_scenario(url: str, sessions: int, records: int) -> dict[str, float]:
    ids = [f"session-{s:04d}" for s in range(sessions)]
    started = time.perf_counter()
    graphs = []
    for journal_id in ids:
        graph = LangGraph(url, full=False)
        graph.new_thread(journal_id)
        graphs.append(graph)
    for i in range(records):
        for graph in graphs:
            graph.append(i, False)
    for graph in graphs:
        graph.close()
    write = time.perf_counter() - started
    started = time.perf_counter()
    reader = LangGraph(url, full=False)
    count = sum(reader.read_thread(journal_id) for journal_id in ids)
    reader.close()
    reopen = time.perf_counter() - started
    assert count == sessions * records, count
    return {"write": write, "reopen": reopen}
