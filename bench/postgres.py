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

Scale rows (issue 28; `--only scale` runs just these, on PostgreSQL's default durability). Every ratio
is paired: the systems it compares run alternately in the same round, rounds repeat (`--repeats`), and
the row reports the median of the per-round ratios:
  N writer processes        appends/s of N processes, each appending single records to its own
                            journals (made before the clock starts): waybook vs raw psycopg inserts of
                            the same bytes (the sealed record lines, one INSERT per commit) vs LangGraph
                            PostgresSaver; and waybook at 8 vs waybook at 1
  wait events, 8 writers    pg_stat_activity sampled every 10 ms during waybook's 8-writer runs:
                            what the active backends waited on (CPU = not waiting)
  create                    per-create time of `store.create` (header included) vs one raw INSERT round
                            trip of a row of the same size, `--creates` of each
  Session.turn              records/s of a 2-record turn (a tool call and its result, one append) vs
                            the same 2 records as 2 single appends
  feed tail latency         8 writer processes append; a reader in this process tails the feed
                            (`store.wait` then `store.feed`): time from each append's acknowledgement
                            in its writer to the reader holding it, p50 and p99

    python bench/postgres.py [--sessions 200] [--records 500] [--appends 1000] [--writers 1,4,8,16]
                             [--only scale] [--creates 10000] [--repeats 3]
Prints a table; writes bench/postgres.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stores import message, waybook_store  # noqa: E402
from tests.helpers.pg_server import Cluster, fresh_schema, with_schema  # noqa: E402
from waybook import Session, ToolOutcome  # noqa: E402
from waybook.codecs._wire import seal  # noqa: E402
from waybook.journal import (  # noqa: E402
    GENESIS,
    AssistantMessage,
    NewRecord,
    ToolCallBlock,
    UserMessage,
    text,
)
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
    """The floor: one table, one INSERT (or one two-row INSERT) per commit; no chain, no rules. The rows
    are the bytes waybook stores for the same records (their sealed canonical lines)."""

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
        question = NewRecord(id=f"m{i}", at=AT, body=UserMessage(parent=None, content=text(message(0, i))))
        lines = [seal(i + 2, question, "0" * 64)[1].decode()]
        if turn:
            reply = AssistantMessage(parent=question.id, content=text(message(1, i)), stop_reason="end_turn")
            lines.append(seal(i + 3, NewRecord(id=f"r{i}", at=AT, body=reply), "0" * 64)[1].decode())
        self._insert_lines(lines)

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


# --- concurrent writer processes -----------------------------------------------------------------------


class Prepared:
    """A writer's journals made before the clock starts, switched every THREAD appends."""

    def __init__(self, system: str, url: str, count: int) -> None:
        self.instance = LangGraph(url, setup=False) if system == "langgraph" else SYSTEMS[system](url)
        self.threads: list[Any] = []
        for _ in range(max(1, -(-count // THREAD))):
            self.instance.new_thread(f"w-{os.getpid()}-{uuid.uuid4().hex[:8]}")
            self.threads.append(self._state())

    def _state(self) -> Any:
        i = self.instance
        if isinstance(i, Waybook):
            return (i.journal, i.head, i.leaf)
        if isinstance(i, Raw):
            return i.thread
        return (i.config, i.messages, i.version)

    def switch(self, k: int) -> None:
        i, state = self.instance, self.threads[k]
        if isinstance(i, Waybook):
            i.journal, i.head, i.leaf = state
        elif isinstance(i, Raw):
            i.thread = state
        else:
            i.config, i.messages, i.version = state


def worker(system: str, url: str, count: int, acks: bool = False) -> None:
    """One writer process: make its journals, say `ready`, wait for `go` on stdin (the common start of
    all writers), append `count` records, report (with `acks`, a line `ack journal seq time` after
    every acknowledged append)."""
    prepared = Prepared(system, url, count)
    instance = prepared.instance
    print("ready", flush=True)
    sys.stdin.readline()
    began = time.time()
    for i in range(count):
        if i % THREAD == 0:
            prepared.switch(i // THREAD)
        instance.append(i, False)
        if acks:
            print(f"ack {instance.journal.journal_id} {instance.head.seq} {time.time()!r}")
    print(json.dumps({"began": began, "ended": time.time()}), flush=True)
    instance.close()


def writers(
    system: str,
    url: str,
    processes: int,
    count: int,
    *,
    during: Callable[[threading.Event], None] | None = None,
    acks: list[tuple[str, int, float]] | None = None,
) -> float:
    """Appends/s of `processes` writers, each on its own sessions, from the first start to the last end.
    `during(stop)` runs in a thread while they write (from the moment every writer has made its journals
    and been told to go); `acks` collects waybook writers' acknowledgements."""
    SYSTEMS[system](url).close()  # create the tables once, before the writers start
    mode = "--worker-acks" if acks is not None else "--worker"
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, mode, system, url, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(processes)
    ]
    for p in procs:  # every writer has imported, connected and made its journals
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready", "a writer failed to start"
    stop = threading.Event()
    side = threading.Thread(target=during, args=(stop,)) if during else None
    if side:
        side.start()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate()[0].strip().splitlines() for p in procs]
    stop.set()
    if side:
        side.join()
    reports = [json.loads(out[-1]) for out in outputs]
    if acks is not None:
        for out in outputs:
            for line in out[:-1]:
                _, journal_id, seq, at = line.split()
                acks.append((journal_id, int(seq), float(at)))
    wall = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return processes * count / wall


# --- issue 28: scale rows, every ratio paired -----------------------------------------------------------


def rotated(keys: list[str], by: int) -> list[str]:
    """`keys` starting at a different one each round, so no system always runs first (or last)."""
    return keys[by % len(keys) :] + keys[: by % len(keys)]


def wait_sampler(base: str, into: Counter[str], locks: Counter[str]) -> Callable[[threading.Event], None]:
    """A `during` for `writers`: sample pg_stat_activity every 10 ms until stopped; `locks` counts the
    statements seen waiting on a lock."""

    def sample(stop: threading.Event) -> None:
        with psycopg.connect(base, autocommit=True) as conn:
            while not stop.wait(0.01):
                for kind, event, query in conn.execute(
                    "SELECT wait_event_type, wait_event, left(query, 60) FROM pg_stat_activity"
                    " WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                ).fetchall():
                    into["CPU" if kind is None else f"{kind}:{event}"] += 1
                    if kind == "Lock":
                        locks[f"{event}: {query}"] += 1

    return sample


def scale_writers(
    base: str, counts: list[int], per_writer: int, repeats: int
) -> tuple[dict[str, Any], list[Row]]:
    keys = list(SYSTEMS)
    rates: dict[str, dict[int, list[float]]] = {k: {n: [] for n in counts} for k in keys}
    waits: Counter[str] = Counter()
    locks: Counter[str] = Counter()
    for r in range(repeats):
        for n in counts:
            for key in rotated(keys, r + n):
                during = wait_sampler(base, waits, locks) if key == "waybook" and n == 8 else None
                rates[key][n].append(writers(key, fresh(base), n, per_writer, during=during))
    rows: list[Row] = []
    ratios: dict[str, float] = {}
    for n in counts:
        per_round = [rates["waybook"][n][r] / rates["raw"][n][r] for r in range(repeats)]
        vs_langgraph = [rates["waybook"][n][r] / rates["langgraph"][n][r] for r in range(repeats)]
        ratios[f"waybook/raw at {n}"] = statistics.median(per_round)
        ratios[f"waybook/langgraph at {n}"] = statistics.median(vs_langgraph)
        for key in keys:
            rows.append(
                (f"{n} writer processes, own journals (appends/s)", key, statistics.median(rates[key][n]), "")
            )
        rows.append(
            (
                f"{n} writers: waybook / raw (median of paired rounds)",
                "ratio",
                ratios[f"waybook/raw at {n}"],
                "goal >= 0.7 at 8",
            )
        )
        rows.append(
            (
                f"{n} writers: waybook / LangGraph (median of paired rounds)",
                "ratio",
                ratios[f"waybook/langgraph at {n}"],
                "goal >= 2 at 8",
            )
        )
    if 1 in counts:
        for key in ("waybook", "raw"):
            for n in counts:
                if n == 1:
                    continue
                scaling = statistics.median(rates[key][n][r] / rates[key][1][r] for r in range(repeats))
                ratios[f"{key} {n} vs 1"] = scaling
                rows.append(
                    (
                        f"{key}: {n} writers / 1 writer (median of rounds)",
                        "ratio",
                        scaling,
                        "goal >= 3 at 8" if key == "waybook" else "",
                    )
                )
    total = sum(waits.values()) or 1
    for event, count in waits.most_common():
        rows.append(
            ("wait events, waybook 8 writers (share of samples)", event, count / total, f"{count} samples")
        )
    for what, count in locks.most_common(5):
        rows.append(("lock waits, waybook 8 writers: statement", what, count, "samples"))
    return {
        "rates": rates,
        "ratios": ratios,
        "wait events (8 writers)": dict(waits),
        "lock waits (8 writers)": dict(locks),
    }, rows


def scale_creates(base: str, total: int, repeats: int) -> tuple[dict[str, Any], list[Row]]:
    """Per-create time of store.create vs one raw INSERT round trip, in paired rounds."""
    rounds = max(repeats, 1)
    each = max(total // rounds, 1)
    url = fresh(base)
    ratios, waybook_ms, raw_ms = [], [], []
    with open_store(url) as store, psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE raw_journals (id text PRIMARY KEY, meta text NOT NULL)")
        store.create("warm-up")  # takes in the catalog once
        payload = json.dumps({"role": "session", "metadata": {"customer": "acme"}}) + " " * 300
        for r in range(rounds):
            timings: dict[str, float] = {}
            for key in rotated(["waybook", "raw"], r):
                started = time.perf_counter()
                if key == "waybook":
                    for i in range(each):
                        store.create(f"c{r}-{i}", metadata={"customer": "acme"})
                else:
                    for i in range(each):
                        conn.execute(
                            "INSERT INTO raw_journals (id, meta) VALUES (%s, %s)", (f"c{r}-{i}", payload)
                        )
                timings[key] = (time.perf_counter() - started) / each
            ratios.append(timings["waybook"] / timings["raw"])
            waybook_ms.append(timings["waybook"] * 1000)
            raw_ms.append(timings["raw"] * 1000)
    ratio = statistics.median(ratios)
    rows: list[Row] = [
        (f"create ({each * rounds} journals, ms each)", "waybook", statistics.median(waybook_ms), ""),
        (f"one raw INSERT round trip ({each * rounds}, ms each)", "raw", statistics.median(raw_ms), ""),
        ("create / one raw INSERT (median of paired rounds)", "ratio", ratio, "goal <= 3"),
    ]
    return {"waybook ms": waybook_ms, "raw ms": raw_ms, "ratio": ratio}, rows


def scale_turns(base: str, turns: int, repeats: int) -> tuple[dict[str, Any], list[Row]]:
    """Records/s of Session.turn (a tool call and its result: 2 records, one append) vs the same 2
    records as 2 single appends, in paired rounds."""
    url = fresh(base)
    ratios = []
    rates: dict[str, list[float]] = {"turn": [], "singles": []}
    with open_store(url) as store:
        for r in range(max(repeats, 1)):
            rate: dict[str, float] = {}
            for key in rotated(["turn", "singles"], r):
                session = Session(store.create(f"{key}-{r}"))
                started = time.perf_counter()
                for i in range(turns):
                    call = ToolCallBlock(call_id=f"c{i}", name="ls", arguments={"path": message(0, i)})
                    if key == "turn":
                        session.turn([call], [ToolOutcome(f"c{i}", message(1, i))])
                    else:
                        session.assistant([call], stop_reason="tool_use")
                        session.tool_result(f"c{i}", message(1, i), tool_name="ls")
                rate[key] = 2 * turns / (time.perf_counter() - started)
                rates[key].append(rate[key])
            ratios.append(rate["turn"] / rate["singles"])
    ratio = statistics.median(ratios)
    rows: list[Row] = [
        ("Session.turn of 2 records (records/s)", "waybook", statistics.median(rates["turn"]), ""),
        ("the same 2 records as 2 appends (records/s)", "waybook", statistics.median(rates["singles"]), ""),
        ("turn / 2 appends (median of paired rounds)", "ratio", ratio, "goal >= 1.8"),
    ]
    return {"rates": rates, "ratio": ratio}, rows


def scale_tail(base: str, per_writer: int) -> tuple[dict[str, Any], list[Row]]:
    """Feed tail latency with 8 waybook writer processes: acknowledgement in the writer to the reader
    (this process, store.wait then store.feed) holding the record."""
    url = fresh(base)
    seen: dict[tuple[str, int], float] = {}
    acks: list[tuple[str, int, float]] = []
    with open_store(url) as reader:
        start = reader.feed_head()

        def tail(stop: threading.Event) -> None:
            position = start
            while not stop.is_set():
                for entry in reader.feed(position):
                    seen[(entry.journal_id, entry.seq)] = time.time()
                    position = entry.position
                reader.wait(position, 0.2)
            for entry in reader.feed(position):  # what committed as the writers finished
                seen[(entry.journal_id, entry.seq)] = time.time()

        writers("waybook", url, 8, per_writer, during=tail, acks=acks)
    latencies = sorted((seen[(j, s)] - at) * 1000 for j, s, at in acks if (j, s) in seen)
    missing = sum((j, s) not in seen for j, s, _ in acks)
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    rows: list[Row] = [
        ("feed tail latency, 8 writers: p50 (ms)", "waybook", p50, f"{len(latencies)} records"),
        ("feed tail latency, 8 writers: p99 (ms)", "waybook", p99, f"{missing} never seen"),
    ]
    return {"p50 ms": p50, "p99 ms": p99, "records": len(latencies), "never seen": missing}, rows


def run_scale(base: str, args: argparse.Namespace, counts: list[int]) -> tuple[dict[str, Any], list[Row]]:
    results: dict[str, Any] = {}
    rows: list[Row] = []
    with psycopg.connect(base) as conn:
        results["server"] = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        results["fsync"] = str(conn.execute("SHOW fsync").fetchone()[0])  # type: ignore[index]
    for name, run in (
        ("writers", lambda: scale_writers(base, counts, args.scale_per_writer, args.repeats)),
        ("create", lambda: scale_creates(base, args.creates, args.repeats)),
        ("turn", lambda: scale_turns(base, args.turns, args.repeats)),
        ("tail", lambda: scale_tail(base, args.scale_per_writer)),
    ):
        if name not in args.sections.split(","):
            continue
        load_before = os.getloadavg()[0]
        results[name], more = run()
        results[name]["load average (1 min) before, after"] = [load_before, os.getloadavg()[0]]
        rows += more
        for row in more:
            print(f"  {row[0]:<62} {row[1]:<26} {row[2]:>10.2f}  {row[3]}", flush=True)
    return results, rows


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
    parser.add_argument("--writers", default="1,4,8,16")
    parser.add_argument("--only", choices=["scale", "classic"], help="run only these rows")
    parser.add_argument("--creates", type=int, default=10_000, help="scale: journals created")
    parser.add_argument("--turns", type=int, default=500, help="scale: turns per round")
    parser.add_argument("--repeats", type=int, default=3, help="scale: paired rounds per ratio")
    parser.add_argument("--scale-per-writer", type=int, default=300, help="scale: appends per writer")
    parser.add_argument("--sections", default="writers,create,turn,tail", help="scale: which to run")
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "URL", "COUNT"))
    parser.add_argument("--worker-acks", nargs=3, metavar=("SYSTEM", "URL", "COUNT"))
    args = parser.parse_args()
    if args.worker or args.worker_acks:
        system, url, count = args.worker or args.worker_acks
        worker(system, url, int(count), acks=bool(args.worker_acks))
        return

    counts = [int(n) for n in args.writers.split(",")]
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    if args.only != "classic":
        level = "as configured" if os.environ.get("WAYBOOK_BENCH_POSTGRES") else "fsync on"
        print(f"\nscale rows ({level}), {results['cpus']} CPUs", flush=True)
        with server(level) as base:
            ran, _ = run_scale(base, args, counts)
        if args.only == "scale" and RESULTS.exists():  # sections not run this time keep their figures
            kept = json.loads(RESULTS.read_text())
            results = {**kept, "cpus": results["cpus"], "scale": {**kept.get("scale", {}), **ran}}
        else:
            results["scale"] = ran
        results["scale"]["level"] = level
        if args.only == "scale":
            RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
            return
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
