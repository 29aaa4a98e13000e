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
                            PostgresSaver; and waybook at 8 vs waybook at 1. `--against REV` adds
                            waybook at git revision REV as a fourth system in the same rounds (before
                            / after, paired)
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
                             [--only scale] [--creates 10000] [--repeats 3] [--against main]
Prints a table; writes bench/postgres.json.

This file runs the levels and prints; the rest lives by area beside it: postgres_cluster.py (the
throwaway server, fresh schemas), postgres_systems.py (the three systems, the append and scenario
rows), postgres_writers.py (writer processes, the N-writer rows), postgres_scale.py (create, turn,
feed tail, and the scale run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.postgres_cluster import LEVELS, Row, checkout, fresh, server  # noqa: E402
from bench.postgres_scale import run_scale  # noqa: E402
from bench.postgres_systems import SYSTEMS, appends, langgraph_scenario, raw_scenario  # noqa: E402
from bench.postgres_writers import BEFORE, worker, writers  # noqa: E402
from bench.stores import waybook_store  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "postgres.json"


# --- running it ---------------------------------------------------------------------------------------


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
    parser.add_argument(
        "--against", metavar="REV", help="scale: also run the writer rows on waybook at this git revision"
    )
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "URL", "COUNT"))
    parser.add_argument("--worker-acks", nargs=3, metavar=("SYSTEM", "URL", "COUNT"))
    args = parser.parse_args()
    if args.worker or args.worker_acks:
        system, url, count = args.worker or args.worker_acks
        worker(system, url, int(count), acks=bool(args.worker_acks))
        return

    counts = [int(n) for n in args.writers.split(",")]
    results: dict[str, Any] = {"cpus": os.cpu_count()}
    with contextlib.ExitStack() as stack:
        if args.against:
            BEFORE[f"waybook@{args.against}"] = stack.enter_context(checkout(args.against))
        run(args, counts, results)


def run(args: argparse.Namespace, counts: list[int], results: dict[str, Any]) -> None:
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
