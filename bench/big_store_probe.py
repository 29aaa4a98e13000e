"""One row of bench/big_stores.py in this (fresh) process: prints one JSON line with the median seconds
of the repeats, the first (cold) run's seconds, the median CPU seconds of the runs after the first and
the first one's, this process's peak RSS (KiB) and, on a SQLite store, the SELECT statements of the
last run (`selects`).

    python -m bench.big_store_probe store|ls|open|front|search|verify URL JOURNALS [--index FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable


def journal_id(n: int) -> str:
    """bench/big_stores.py's ids (this file runs alone too, under an older checkout for its figures)."""
    return f"session-{n:06d}"


CPU: list[float] = []
"""The CPU seconds of this process for each run `timed` made (the paired rows compare these: a loaded
machine stretches wall time far more than the CPU a run takes)."""
SELECTS: list[int] = []
"""For a SQLite store, the SELECT statements each run of `timed` ran."""
_TRACED: list[str] = []


def trace_sqlite() -> None:
    """Count the statements every SQLite connection opened from now on runs (sqlite3's trace callback)."""
    import sqlite3

    connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        conn.set_trace_callback(_TRACED.append)
        return conn

    sqlite3.connect = traced  # type: ignore[assignment]


def timed(work: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median seconds of `repeats` runs after the first, the first run's seconds)."""
    seconds = []
    for _ in range(repeats + 1):
        _TRACED.clear()
        started, cpu = time.perf_counter(), time.process_time()
        work()
        seconds.append(time.perf_counter() - started)
        CPU.append(time.process_time() - cpu)
        SELECTS.append(sum(1 for statement in _TRACED if statement.lstrip().upper().startswith("SELECT")))
    return statistics.median(seconds[1:] or seconds), seconds[0]


def cli(argv: list[str]) -> Callable[[], object]:
    from waybook.cli import main

    def run() -> None:
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
            main(argv)

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("op", choices=["store", "ls", "open", "front", "search", "verify"])
    parser.add_argument("url")
    parser.add_argument("journals", type=int)
    parser.add_argument("--index")
    args = parser.parse_args()
    n = args.journals
    if args.url.startswith("sqlite:"):
        trace_sqlite()
    if args.op == "store":
        from waybook.stores import open_store

        median, cold = timed(lambda: open_store(args.url, create=False).close(), 3)
    elif args.op == "ls":
        median, cold = timed(cli(["ls", "--store", args.url]), 3)
    elif args.op == "open":
        from waybook.stores import open_store

        picks = random.Random(50).sample(range(n), min(n, 50))
        with open_store(args.url, create=False) as store:
            store.open(journal_id(picks[0])).close()
            seconds = []
            for pick in picks:
                started, cpu = time.perf_counter(), time.process_time()
                store.open(journal_id(pick)).close()
                seconds.append(time.perf_counter() - started)
                CPU.append(time.process_time() - cpu)
        median, cold = statistics.median(seconds), seconds[0]
    elif args.op == "front":
        from waybook.view import ViewServer

        server = ViewServer(args.url)
        try:
            median, cold = timed(lambda: server.front_page(1), 3)
        finally:
            server.server_close()
    elif args.op == "search":
        word = f"marker{n // 2}"
        median, cold = timed(cli(["search", word, "--store", args.url, "--index", args.index]), 3)
    else:
        median, cold = timed(cli(["verify", "--store", args.url, "--json"]), 0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = statistics.median(CPU[1:] or CPU)
    found = {"seconds": median, "cold": cold, "cpu": cpu, "cold_cpu": CPU[0], "rss_kb": rss}
    if SELECTS and args.url.startswith("sqlite:"):
        found["selects"] = SELECTS[-1]
    sys.stdout.write(json.dumps(found) + "\n")


if __name__ == "__main__":
    main()
