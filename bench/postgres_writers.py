"""Concurrent writer processes for the PostgreSQL bench (bench/postgres.py): each writer a process of
its own (bench/postgres.py --worker), its journals made before a common start; the appends/s of N of
them, and the scale rows of N writers (paired rounds, with the wait events of waybook's 8 writers)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.postgres_cluster import Row, fresh, rotated  # noqa: E402
from bench.postgres_systems import SYSTEMS, THREAD, LangGraph, Raw, Waybook  # noqa: E402


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


BEFORE: dict[str, Path] = {}
"""`waybook@REV` systems (bench/postgres.py --against REV): the checkout each one's writers run."""


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
    and been told to go); `acks` collects waybook writers' acknowledgements. `waybook@REV` runs the
    waybook writers of the checkout in BEFORE[system]."""
    code = BEFORE.get(system, ROOT)
    name = "waybook" if system in BEFORE else system
    if code == ROOT:
        SYSTEMS[name](url).close()  # create the tables once, before the writers start
    else:
        subprocess.run(  # the other version makes (or migrates) its schema itself
            [sys.executable, "-c", f"from waybook.stores import open_store; open_store({url!r}).close()"],
            cwd=code,
            env={**os.environ, "PYTHONPATH": str(code)},
            check=True,
        )
    mode = "--worker-acks" if acks is not None else "--worker"
    procs = [
        subprocess.Popen(
            [sys.executable, str(code / "bench" / "postgres.py"), mode, name, url, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=code,
            env={**os.environ, "PYTHONPATH": str(code)},
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


# --- issue 28: scale rows of N writers, every ratio paired -------------------------------------------


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
    keys = [*SYSTEMS, *BEFORE]
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
                "goal >= 0.8 at 1, >= 0.7 at 8",
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
        ceiling = [rates["raw"][n][r] / rates["langgraph"][n][r] for r in range(repeats)]
        ratios[f"raw/langgraph at {n}"] = statistics.median(ceiling)
        rows.append(
            (
                f"{n} writers: raw / LangGraph, the ceiling of waybook / LangGraph (median of paired rounds)",
                "ratio",
                ratios[f"raw/langgraph at {n}"],
                "floor row: raw inserts of the same bytes",
            )
        )
        for before in BEFORE:
            paired = [rates[before][n][r] / rates["raw"][n][r] for r in range(repeats)]
            ratios[f"{before}/raw at {n}"] = statistics.median(paired)
            label = f"{n} writers: {before} / raw (median of paired rounds)"
            rows.append((label, "ratio", ratios[f"{before}/raw at {n}"], "before"))
            speedup = [rates["waybook"][n][r] / rates[before][n][r] for r in range(repeats)]
            ratios[f"waybook/{before} at {n}"] = statistics.median(speedup)
            label = f"{n} writers: waybook / {before} (median of paired rounds)"
            rows.append((label, "ratio", ratios[f"waybook/{before} at {n}"], "after / before"))
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
