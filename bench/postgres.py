"""PostgreSQL bench: waybook's PostgreSQL store against LangGraph's PostgresSaver and raw psycopg inserts,
on the same server, in one run.

Rows:
  append 1 record     one committed append per message (waybook: Session.user; raw: one INSERT per
                      commit; LangGraph: one checkpoint per message, holding the thread's messages so far,
                      as a graph with an add_messages channel stores them), in threads of 50 messages
  append turn batch   one committed append per turn (a user message and the assistant reply)
  scenario            200 sessions x 500 records (bench/stores.py's scenario): write round-robin, reopen
                      and read (waybook proves every chain), read the store-wide feed (raw: all rows by id;
                      LangGraph has no store-wide order). LangGraph's checkpoints here hold only the new
                      message (a lower bound on its cost: a real graph re-stores the growing list)
  writers N           appends/s with N concurrent writer processes, each on its own session
Ratios are against raw psycopg of the same round. The server is a throwaway cluster with PostgreSQL's
default durability (fsync on, synchronous_commit on) unless WAYBOOK_BENCH_POSTGRES names another.

    python bench/postgres.py [--sessions 200] [--records 500] [--appends 1000] [--writers 1,4,16]
Prints a table; writes bench/postgres.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stores import message, waybook_store  # noqa: E402
from tests.helpers.pg_server import Cluster, fresh_schema, with_schema  # noqa: E402
from waybook.journal import GENESIS, AssistantMessage, NewRecord, UserMessage, text  # noqa: E402
from waybook.stores import open_store  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "postgres.json"
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
    """The floor: one table, JSON text, one INSERT (or one two-row INSERT) per commit; no chain, no rules."""

    name = "raw psycopg"

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS raw_messages (id bigserial PRIMARY KEY, session text NOT NULL,"
            " data text NOT NULL)"
        )
        self.conn.execute("CREATE INDEX IF NOT EXISTS raw_by_session ON raw_messages (session, id)")
        self.thread = ""

    def new_thread(self, thread: str) -> None:
        self.thread = thread
        self._insert([{"kind": "header", "session": thread}])

    def append(self, i: int, turn: bool) -> None:
        rows = [{"role": "user", "content": message(0, i)}]
        if turn:
            rows.append({"role": "assistant", "content": message(1, i)})
        self._insert(rows)

    def _insert(self, rows: list[dict[str, str]]) -> None:
        values = ", ".join(["(%s, %s)"] * len(rows))
        params: list[str] = []
        for row in rows:
            params += [self.thread, json.dumps(row)]
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


# --- concurrent writer processes -----------------------------------------------------------------------


def worker(system: str, url: str, count: int, start_at: float) -> None:
    """One writer process: set up, wait for the common start, append `count` records, report."""
    instance = LangGraph(url, setup=False) if system == "langgraph" else SYSTEMS[system](url)
    instance.new_thread(f"w-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    time.sleep(max(0.0, start_at - time.time()))
    began = time.time()
    for i in range(count):
        if i and i % THREAD == 0:
            instance.new_thread(f"w-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        instance.append(i, False)
    print(json.dumps({"began": began, "ended": time.time()}), flush=True)
    instance.close()


def writers(system: str, url: str, processes: int, count: int) -> float:
    """Appends/s of `processes` writers, each on its own sessions, from the first start to the last end."""
    SYSTEMS[system](url).close()  # create the tables once, before the writers start
    start_at = time.time() + 2.0 + 0.15 * processes  # time to import and connect
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", system, url, str(count), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(processes)
    ]
    reports = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    wall = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return processes * count / wall


# --- running it ---------------------------------------------------------------------------------------


LEVELS = {
    # Commits wait for the WAL write, not the disk: what each system costs in CPU and round trips.
    "fsync off": ("listen_addresses=127.0.0.1", "max_connections=300", "fsync=off"),
    # PostgreSQL's defaults: every commit waits for the disk, so a smaller scenario.
    "fsync on": ("listen_addresses=127.0.0.1", "max_connections=300"),
}


@contextmanager
def server(level: str) -> Iterator[str]:
    url = os.environ.get("WAYBOOK_BENCH_POSTGRES")
    if url:
        yield url
        return
    cluster = Cluster.create(settings=LEVELS[level])
    try:
        yield cluster.url
    finally:
        cluster.stop()


def fresh(base: str) -> str:
    return with_schema(base, fresh_schema(base))


def run_level(base: str, sizes: dict[str, int], counts: list[int]) -> tuple[dict[str, Any], list[Row]]:
    results: dict[str, Any] = {"sizes": sizes}
    rows: list[Row] = []
    with psycopg.connect(base) as conn:
        results["server"] = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        results["fsync"] = str(conn.execute("SHOW fsync").fetchone()[0])  # type: ignore[index]
    for turn in (False, True):
        label = "append turn batch (/s)" if turn else "append 1 record (/s)"
        rates = {key: appends(SYSTEMS[key], fresh(base), sizes["appends"], turn) for key in SYSTEMS}
        results[label] = rates
        rows += [(label, key, rate, f"{rate / rates['raw']:.2f}x raw") for key, rate in rates.items()]

    sessions, records = sizes["sessions"], sizes["records"]
    scenario = {
        "waybook": waybook_store(fresh(base), sessions, records),
        "raw": raw_scenario(fresh(base), sessions, records),
        "langgraph": langgraph_scenario(fresh(base), sessions, records),
    }
    results["scenario"] = scenario
    for key, phases in scenario.items():
        for phase, seconds in phases.items():
            label = f"{sessions}x{records} {phase} (s)"
            rows.append((label, key, seconds, f"{seconds / scenario['raw'][phase]:.2f}x raw time"))

    concurrency: dict[str, dict[int, float]] = {key: {} for key in SYSTEMS}
    for n in counts:
        for key in SYSTEMS:
            concurrency[key][n] = writers(key, fresh(base), n, sizes["per_writer"])
        for key in SYSTEMS:
            rate = concurrency[key][n]
            rows.append((f"{n} writers (appends/s)", key, rate, f"{rate / concurrency['raw'][n]:.2f}x raw"))
    results["writers"] = concurrency
    return results, rows


Row = tuple[str, str, float, str]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--appends", type=int, default=1000)
    parser.add_argument("--per-writer", type=int, default=300)
    parser.add_argument("--fsync-sessions", type=int, default=20)
    parser.add_argument("--fsync-records", type=int, default=50)
    parser.add_argument("--fsync-appends", type=int, default=300)
    parser.add_argument("--fsync-per-writer", type=int, default=100)
    parser.add_argument("--writers", default="1,4,16")
    parser.add_argument("--worker", nargs=4, metavar=("SYSTEM", "URL", "COUNT", "START_AT"))
    args = parser.parse_args()
    if args.worker:
        system, url, count, start_at = args.worker
        worker(system, url, int(count), float(start_at))
        return

    counts = [int(n) for n in args.writers.split(",")]
    sizes = {
        "fsync off": {
            "sessions": args.sessions,
            "records": args.records,
            "appends": args.appends,
            "per_writer": args.per_writer,
        },
        "fsync on": {
            "sessions": args.fsync_sessions,
            "records": args.fsync_records,
            "appends": args.fsync_appends,
            "per_writer": args.fsync_per_writer,
        },
    }
    levels = ["as configured"] if os.environ.get("WAYBOOK_BENCH_POSTGRES") else list(LEVELS)
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    for level in levels:
        with server(level) as base:
            results[level], rows = run_level(base, sizes.get(level, sizes["fsync off"]), counts)
        width = max(len(r[0]) for r in rows)
        print(
            f"\n{level}: PostgreSQL {results[level]['server']} (fsync {results[level]['fsync']}), "
            f"{results['cpus']} CPUs"
        )
        for label, key, value, ratio in rows:
            print(f"{label:<{width}}  {key:<10} {value:>10.2f}  {ratio}", flush=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
