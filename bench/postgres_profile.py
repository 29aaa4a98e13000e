"""Where an append's time goes (issue 50): one writer process at a time appends single records, and the
bench measures, per append, the writer's CPU (`time.process_time`), the whole server's CPU (every
process of the throwaway cluster, from /proc: its backends, WAL writer, checkpointer), the wall
time, and from `pg_stat_statements` the statements the server ran and their execution and planning
time. Systems: raw psycopg inserts of the same sealed lines (bench/postgres_systems.py `Raw`), waybook
from this checkout, and with `--against REV` waybook at REV (its `waybook/` and `bench/` from `git
archive`, run by this file). Rounds alternate the systems (rotated order); figures are medians of
rounds. `--cprofile` adds the writer's hot functions by CPU time (cProfile timed by `process_time`, in
a run of its own: profiling slows it, about 3x, so read its shares, not its seconds). Every run also
measures the WAL the server wrote per append (`wal bytes`); `--wal-split` adds a run of each system
that splits it by WAL record type (pg_walinspect: the heap insert, the head row's HOT update, the
B-tree inserts, the commit record).

    python -m bench.postgres_profile [--appends 2000] [--rounds 3] [--against main] [--cprofile]
        [--wal-split]

Prints a table; writes bench/postgres_profile.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "postgres_profile.json"
PROFILE_SETTINGS = (
    "listen_addresses=127.0.0.1",
    "max_connections=300",
    "shared_preload_libraries=pg_stat_statements",
    "pg_stat_statements.track=top",
    "pg_stat_statements.track_planning=on",
)


def worker(system: str, url: str, count: int, profile: str | None) -> None:
    """One writer: make a journal, say `ready`, wait for `go`, append `count` single records, print
    its CPU and wall time as JSON, wait for a last line (so its server process is measured alive)."""
    from bench.postgres_systems import SYSTEMS

    instance = SYSTEMS[system](url)
    instance.new_thread(f"p-{os.getpid()}")
    for i in range(20):  # connections made, statements prepared: the steady state is measured
        instance.append(i, False)
    print("ready", flush=True)
    sys.stdin.readline()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)  # CPU, not wall: waits and preemption excluded
        profiler.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(20, 20 + count):
        instance.append(i, False)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if profiler is not None and profile:
        profiler.disable()
        profiler.dump_stats(profile)
    print(json.dumps({"cpu": cpu, "wall": wall}), flush=True)
    sys.stdin.readline()
    instance.close()


def server_cpu(postmaster: int) -> float:
    """CPU seconds of the postmaster and every process it started (alive now)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry.name) == postmaster or int(fields[1]) == postmaster:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def run_one(
    base: str,
    postmaster: int,
    system: str,
    code: Path,
    count: int,
    profile: str | None = None,
    wal_split: dict[str, float] | None = None,
) -> dict[str, float]:
    """One writer's figures per append; with `wal_split`, fill it with the WAL bytes per append of each
    record type (pg_walinspect's `pg_get_wal_stats`: heap inserts, HOT updates, B-tree inserts...)."""
    import psycopg

    from bench.postgres_cluster import fresh

    url = fresh(base)
    name = system.partition("@")[0]
    proc = subprocess.Popen(
        [sys.executable, str(code / "bench" / "postgres_profile.py"), "--worker", name, url, str(count)]
        + (["--profile-to", profile] if profile else []),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", f"the {system} writer failed to start"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")
        wal_before = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
    before = server_cpu(postmaster)
    proc.stdin.write("go\n")
    proc.stdin.flush()
    report = json.loads(proc.stdout.readline())
    server = server_cpu(postmaster) - before
    proc.stdin.write("bye\n")
    proc.stdin.flush()
    proc.communicate(timeout=60)
    with psycopg.connect(base, autocommit=True) as conn:
        wal = conn.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)", (wal_before,)
        ).fetchone()[0]  # type: ignore[index]
        if wal_split is not None:
            for kind, size in conn.execute(
                # Up to the flushed end: pg_walinspect refuses an end past it ("cannot accept future end
                # LSN"), and a record inserted since (a background one, never an append's) is not ours.
                'SELECT "resource_manager/record_type", combined_size FROM pg_get_wal_stats(%s::pg_lsn,'
                " pg_current_wal_flush_lsn(), true) WHERE count > 0 ORDER BY combined_size DESC",
                (wal_before,),
            ).fetchall():
                wal_split[str(kind)] = float(size) / count
        calls, exec_ms, plan_ms = conn.execute(
            "SELECT coalesce(sum(calls), 0), coalesce(sum(total_exec_time), 0),"
            " coalesce(sum(total_plan_time), 0)"
            " FROM pg_stat_statements WHERE query NOT LIKE '%%pg_stat_statements%%'"
            " AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()  # type: ignore[misc]
    return {
        "client cpu ms": 1000 * report["cpu"] / count,
        "server cpu ms": 1000 * server / count,
        "wall ms": 1000 * report["wall"] / count,
        "statements": float(calls) / count,
        "server exec ms": float(exec_ms) / count,
        "server plan ms": float(plan_ms) / count,
        "wal bytes": float(wal) / count,
    }


@contextlib.contextmanager
def against(rev: str) -> Iterator[Path]:
    """The code of `rev` (bench/postgres_cluster.py `checkout`), driven by this file's worker."""
    from bench.postgres_cluster import checkout

    with checkout(rev) as where:
        (where / "bench" / "postgres_profile.py").write_text(Path(__file__).read_text())
        yield where


def hot_functions(path: str, top: int) -> list[tuple[str, float, float]]:
    """(function, own seconds, cumulative seconds) of the `top` functions by own time."""
    import pstats

    stats = pstats.Stats(path)
    rows = []
    for (file, line, name), (_, _, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        short = "/".join(Path(file).parts[-2:])
        rows.append((f"{short}:{line}({name})", own, cumulative))
    rows.sort(key=lambda r: -r[1])
    return rows[:top]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", metavar="REV", help="also profile waybook at this git revision")
    parser.add_argument("--cprofile", action="store_true", help="print the writer's hot functions")
    parser.add_argument(
        "--wal-split", action="store_true", help="print each system's WAL bytes per append by record type"
    )
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "URL", "COUNT"))
    parser.add_argument("--profile-to")
    args = parser.parse_args()
    if args.worker:
        sys.path.insert(0, str(Path.cwd()))
        system, url, count = args.worker
        worker(system, url, int(count), args.profile_to)
        return

    sys.path.insert(0, str(ROOT))
    from bench.postgres_cluster import rotated
    from tests.helpers.pg_server import Cluster

    with contextlib.ExitStack() as stack:
        codes = {"raw": ROOT, "waybook": ROOT}
        if args.against:
            codes[f"waybook@{args.against}"] = stack.enter_context(against(args.against))
        cluster = Cluster.create(settings=PROFILE_SETTINGS)
        stack.callback(cluster.stop)
        import psycopg

        with psycopg.connect(cluster.url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            if args.wal_split:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        postmaster = int((cluster.datadir / "postmaster.pid").read_text().split()[0])
        figures: dict[str, list[dict[str, float]]] = {key: [] for key in codes}
        for r in range(args.rounds):
            for key in rotated(list(codes), r):
                figures[key].append(run_one(cluster.url, postmaster, key, codes[key], args.appends))
        medians = {
            key: {what: statistics.median(run[what] for run in runs) for what in runs[0]}
            for key, runs in figures.items()
        }
        results: dict[str, Any] = {
            "appends": args.appends,
            "rounds": args.rounds,
            "load average (1 min)": os.getloadavg()[0],
            "medians": medians,
            "runs": figures,
        }
        print(f"\none writer, {args.appends} single-record appends, median of {args.rounds} rounds, each")
        whats = list(next(iter(medians.values())))
        print(f"{'':<18}" + "".join(f"{what:>16}" for what in whats))
        for key, row in medians.items():
            print(f"{key:<18}" + "".join(f"{row[what]:>16.3f}" for what in whats))
        for key in codes:
            if key == "raw":
                continue
            raw = medians["raw"]
            ratios = {what: medians[key][what] / raw[what] for what in whats if raw[what]}
            print(f"{key + ' / raw':<18}" + "".join(f"{ratios.get(what, 0):>16.2f}" for what in whats))
        if args.wal_split:
            splits: dict[str, dict[str, float]] = {}
            for key in codes:  # one more run each (not a round: its figures are only the split)
                splits[key] = {}
                run_one(cluster.url, postmaster, key, codes[key], args.appends, wal_split=splits[key])
            results["wal bytes per append by record type"] = splits
            kinds = sorted(
                {k for split in splits.values() for k in split}, key=lambda k: -splits["raw"].get(k, 0)
            )
            print(f"\nWAL bytes per append by record type (one run each, {args.appends} appends)")
            print(f"{'':<22}" + "".join(f"{key:>16}" for key in codes))
            for kind in sorted(kinds, key=lambda k: -max(split.get(k, 0) for split in splits.values())):
                print(f"{kind:<22}" + "".join(f"{splits[key].get(kind, 0):>16.1f}" for key in codes))
        if args.cprofile:
            profile = str(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "writer.prof")
            run_one(cluster.url, postmaster, "waybook", ROOT, args.appends, profile)
            hot = hot_functions(profile, 25)
            results["hot functions (own s, cumulative s)"] = hot
            print(f"\nwaybook writer's hot functions ({args.appends} appends under cProfile)")
            for name, own, cumulative in hot:
                print(f"  {own:8.3f} {cumulative:8.3f}  {name}")
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
