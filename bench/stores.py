"""Stores bench: many sessions in one store, against raw SQLite and OpenAI Agents' SQLiteSession.

Scenario (defaults: 200 sessions x 500 records, as an agent runtime holds them):
  write    create every session, then append one record per commit, round-robin over the sessions
  reopen   close everything, open the store again, open and read every session in full (opening a
           waybook journal proves its digest chain and session rules; the baselines decode their JSON)
  feed     read every record of every session in one global commit order (waybook's feed; raw SQLite:
           all rows by rowid; SQLiteSession has no store-wide order, so no row)
Then the tail lag: how long after a commit returns a thread tailing the feed (`waybook.stores.tail`)
sees it, for the waybook stores (the baselines have no feed to tail).
Two durability levels: "flush" (SQLite synchronous=NORMAL, directory store write(2) only) at full size,
and "fsync" (synchronous=FULL, directory store fsync per append) at a smaller size, since there every
commit waits for the disk. Every system runs in the same process and the same round, one after the
other; ratios are against raw SQLite of the same round and level (the median of the rounds'
ratios). SQLiteSession is opened with the same
synchronous setting (it does not offer one, so a subclass sets it on each connection).

    python bench/stores.py [--sessions 200] [--records 500] [--rounds 1]
                           [--fsync-sessions 20] [--fsync-records 50] [--fsync-rounds 3]
Prints a table; writes bench/stores.json.

    python -m bench.stores --journals 100000
The big-store rows instead (bench/big_stores.py: ls, open, serve's front page, search, verify --store and
peak memory on stores of that many journals); writes bench/big_stores.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from waybook import Session
from waybook.stores import open_store

RESULTS = Path(__file__).resolve().parent / "stores.json"
WORDS = "the agent read the file, ran the tests and summarised what failed and why it failed "


def message(session: int, i: int) -> str:
    return f"{session}:{i}: {WORDS * 2}"[:170]


# --- waybook stores ---------------------------------------------------------------------------------


def waybook_store(url: str, sessions: int, records: int) -> dict[str, float]:
    ids = [f"session-{s:04d}" for s in range(sessions)]
    started = time.perf_counter()
    with open_store(url) as store:
        writers = [Session(store.create(journal_id)) for journal_id in ids]
        for i in range(records - 1):  # the header is record 1
            for s, session in enumerate(writers):
                if i % 2 == 0:
                    session.user(message(s, i))
                else:
                    session.assistant(message(s, i))
        for session in writers:
            session.journal.close()
    write = time.perf_counter() - started

    started = time.perf_counter()
    count = 0
    with open_store(url) as store:
        for journal_id in ids:
            with store.open(journal_id) as journal:  # opening proves the chain and the session rules
                count += sum(1 for _ in journal.read())
    reopen = time.perf_counter() - started
    assert count == sessions * records, count

    started = time.perf_counter()
    with open_store(url) as store:
        fed = sum(1 for entry in store.feed() if entry.journal_id != "_catalog")
    feed = time.perf_counter() - started
    assert fed == sessions * records, fed
    return {"write": write, "reopen": reopen, "feed": feed}


def tail_lag(url: str, sessions: int = 20, records: int = 2000) -> dict[str, float]:
    """Seconds from a commit returning to a tailing thread of the same process seeing it (p50, p99)."""
    import threading

    from waybook.stores import tail

    committed: dict[tuple[str, int], float] = {}
    seen: dict[tuple[str, int], float] = {}
    with open_store(url) as store:
        writers = [Session(store.create(f"tail-{s}")) for s in range(sessions)]
        start = store.feed_head()

        def follow() -> None:
            for entry in tail(store, start):
                seen[(entry.journal_id, entry.seq)] = time.perf_counter()
                if len(seen) == records:
                    return

        follower = threading.Thread(target=follow)
        follower.start()
        for i in range(records):
            session = writers[i % sessions]
            record = session.user(message(i, i))
            committed[(f"tail-{i % sessions}", record.seq)] = time.perf_counter()
        follower.join()
    lags = sorted(seen[key] - committed[key] for key in committed)
    return {"tail_p50": lags[len(lags) // 2], "tail_p99": lags[int(len(lags) * 0.99)]}


# --- raw SQLite -------------------------------------------------------------------------------------


def raw_sqlite(path: Path, sessions: int, records: int, synchronous: str) -> dict[str, float]:
    """The floor: one table, one INSERT per commit, JSON text, no chain, no rules."""

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        return conn

    started = time.perf_counter()
    conn = connect()
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session TEXT, data TEXT)")
    conn.execute("CREATE INDEX by_session ON messages (session, id)")
    ids = [f"session-{s:04d}" for s in range(sessions)]
    for journal_id in ids:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO sessions VALUES (?)", (journal_id,))
        conn.execute(
            "INSERT INTO messages (session, data) VALUES (?, ?)",
            (journal_id, json.dumps({"kind": "header", "journal": journal_id})),
        )
        conn.execute("COMMIT")
    for i in range(records - 1):
        for s, journal_id in enumerate(ids):
            role = "user" if i % 2 == 0 else "assistant"
            data = json.dumps({"role": role, "content": message(s, i)})
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO messages (session, data) VALUES (?, ?)", (journal_id, data))
            conn.execute("COMMIT")
    conn.close()
    write = time.perf_counter() - started

    started = time.perf_counter()
    conn = connect()
    count = 0
    for journal_id in ids:
        rows = conn.execute("SELECT data FROM messages WHERE session = ? ORDER BY id", (journal_id,))
        count += sum(1 for (data,) in rows if json.loads(data))
    conn.close()
    reopen = time.perf_counter() - started
    assert count == sessions * records, count

    started = time.perf_counter()
    conn = connect()
    fed = sum(1 for (data,) in conn.execute("SELECT data FROM messages ORDER BY id") if json.loads(data))
    conn.close()
    feed = time.perf_counter() - started
    assert fed == sessions * records
    return {"write": write, "reopen": reopen, "feed": feed}


# --- OpenAI Agents' SQLiteSession -----------------------------------------------------------------


def agents_sqlite_session(path: Path, sessions: int, records: int, synchronous: str) -> dict[str, float]:
    from agents import SQLiteSession

    class SyncedSession(SQLiteSession):
        @staticmethod
        def _configure_connection(conn: sqlite3.Connection) -> None:
            SQLiteSession._configure_connection(conn)
            conn.execute(f"PRAGMA synchronous = {synchronous}")

    ids = [f"session-{s:04d}" for s in range(sessions)]

    async def write() -> None:
        opened = [SyncedSession(journal_id, path) for journal_id in ids]
        for session, journal_id in zip(opened, ids, strict=True):
            await session.add_items([{"role": "system", "content": f"header {journal_id}"}])
        for i in range(records - 1):
            for s, session in enumerate(opened):
                role = "user" if i % 2 == 0 else "assistant"
                await session.add_items([{"role": role, "content": message(s, i)}])
        for session in opened:
            session.close()

    async def reopen() -> int:
        count = 0
        for journal_id in ids:
            session = SyncedSession(journal_id, path)
            count += len(await session.get_items())
            session.close()
        return count

    started = time.perf_counter()
    asyncio.run(write())
    written = time.perf_counter() - started
    started = time.perf_counter()
    count = asyncio.run(reopen())
    reopened = time.perf_counter() - started
    assert count == sessions * records, count
    return {"write": written, "reopen": reopened}


# --- the run ----------------------------------------------------------------------------------------


def run_level(level: str, sessions: int, records: int, rounds: int) -> list[dict[str, Any]]:
    """Every system, `rounds` times (the order of the waybook stores and SQLiteSession reversed every
    other round); seconds are the median over rounds, ratios the median of each round's ratio to raw
    SQLite in the same round (paired)."""
    synchronous = "NORMAL" if level == "flush" else "FULL"
    n, m = sessions, records
    measured: list[dict[str, dict[str, float]]] = []
    for round_ in range(rounds):
        tmp = Path(tempfile.mkdtemp(prefix="waybook-bench-stores-"))
        systems: list[tuple[str, Callable[[Path], dict[str, float]]]] = [
            ("waybook sqlite", lambda t: waybook_store(f"sqlite:{t}/wb.db?durability={level}", n, m)),
            ("waybook directory", lambda t: waybook_store(f"file:{t}/dir?durability={level}", n, m)),
            ("agents SQLiteSession", lambda t: agents_sqlite_session(t / "agents.db", n, m, synchronous)),
        ]
        if round_ % 2:
            systems.reverse()
        try:
            timings = {"raw sqlite": raw_sqlite(tmp / "raw.db", n, m, synchronous)}
            timings.update((name, measure(tmp)) for name, measure in systems)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        measured.append(timings)
    total = sessions * records
    rows = []
    for name in ("raw sqlite", "waybook sqlite", "waybook directory", "agents SQLiteSession"):
        for phase in measured[0][name]:
            seconds = statistics.median(r[name][phase] for r in measured)
            ratio = statistics.median(r[name][phase] / r["raw sqlite"][phase] for r in measured)
            rows.append(
                {
                    "level": level,
                    "system": name,
                    "phase": phase,
                    "sessions": sessions,
                    "records": total,
                    "rounds": rounds,
                    "seconds": round(seconds, 4),
                    "records_per_s": round(total / seconds),
                    "vs_raw_sqlite": round(ratio, 2),
                }
            )
    return rows


def tail_rows() -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="waybook-bench-tail-"))
    try:
        lags = {
            "waybook sqlite": tail_lag(f"sqlite:{tmp}/t.db?durability=flush"),
            "waybook directory": tail_lag(f"file:{tmp}/dir?durability=flush"),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [{"system": name, **{k: round(v * 1000, 3) for k, v in lag.items()}} for name, lag in lags.items()]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--fsync-sessions", type=int, default=20)
    parser.add_argument("--fsync-records", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1, help="rounds at the flush level (default 1)")
    parser.add_argument("--fsync-rounds", type=int, default=3, help="rounds at the fsync level (default 3)")
    parser.add_argument(
        "--journals",
        type=int,
        help="instead: the big-store rows (bench/big_stores.py) on stores of this many journals",
    )
    parser.add_argument(
        "--stores", nargs="*", help="with --journals: only these of directory, sqlite, postgres"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="with --journals: leave out the verify --store rows"
    )
    parser.add_argument(
        "--out", type=Path, help="with --journals: write the rows here (default bench/big_stores.json)"
    )
    args = parser.parse_args()
    if args.journals is not None:
        from bench.big_stores import RESULTS as BIG_RESULTS
        from bench.big_stores import run

        run(args.journals, verify=not args.no_verify, stores=args.stores, results=args.out or BIG_RESULTS)
        return
    rows = run_level("flush", args.sessions, args.records, args.rounds)
    rows += run_level("fsync", args.fsync_sessions, args.fsync_records, args.fsync_rounds)
    header = f"{'level':6} {'system':22} {'phase':7} {'records':>8} {'seconds':>9} {'rec/s':>9} {'x raw':>7}"
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['level']:6} {row['system']:22} {row['phase']:7} {row['records']:>8} "
            f"{row['seconds']:>9.3f} {row['records_per_s']:>9} {row['vs_raw_sqlite']:>7}"
        )
    tails = tail_rows()
    print("\ntail lag, a commit to a tailing thread of the same process (2000 records, 20 sessions), ms")
    for row in tails:
        print(f"  {row['system']:22} p50 {row['tail_p50']:8.3f}  p99 {row['tail_p99']:8.3f}")
    RESULTS.write_text(json.dumps({"rows": rows, "tail_lag_ms": tails}, indent=2) + "\n")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
