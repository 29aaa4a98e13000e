"""The single-process scale rows of the PostgreSQL bench (bench/postgres.py, issue 28): create vs a raw
INSERT, Session.turn vs two appends, the feed tail latency under 8 writers; and `run_scale`, which runs
the chosen sections (the writer rows from bench/postgres_writers.py) and prints them as they come."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.postgres_cluster import Row, fresh, rotated  # noqa: E402
from bench.postgres_writers import scale_writers, writers  # noqa: E402
from bench.stores import message  # noqa: E402
from waybook import Session, ToolOutcome  # noqa: E402
from waybook.model import ToolCallBlock  # noqa: E402
from waybook.stores import open_store  # noqa: E402


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
        ("create / one raw INSERT (median of paired rounds)", "ratio", ratio, "goal <= 2"),
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
