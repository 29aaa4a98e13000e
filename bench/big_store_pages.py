"""A page of a big database store, before and after it was read together (issue 50):
`python -m bench.big_store_pages --journals N [--against REV] [--rounds R] [--stores sqlite postgres]`.

`ls first page` (`waybook ls --store URL`: 100 journals glanced at) and `serve front page`
(`ViewServer.front_page(1)`: the count and 50 journals proved) on the cached big stores of
bench/big_stores.py (built first where missing; PostgreSQL when WAYBOOK_BENCH_POSTGRES names a server),
each run in a fresh process (bench/big_store_probe.py) by the code of git revision REV (default `main`:
before) and by this checkout (after), alternately, R rounds (each round starts with the other side).
Each probe reports the median of 3 runs after a cold one: wall seconds, CPU seconds of the process, and
(SQLite) the SELECT statements a run made. A row gives the medians of each side and the median of the
paired after / before ratios; on a loaded machine read the CPU ratio and the statements, not the
milliseconds. Writes bench/big_store_pages.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.big_stores import CACHE, ROOT, ensure, store_urls
from bench.postgres_cluster import checkout

RESULTS = Path(__file__).resolve().parent / "big_store_pages.json"
PROBE = Path(__file__).resolve().parent / "big_store_probe.py"
OPS = {"ls": "ls first page", "front": "serve front page"}


def probe(code: Path, op: str, url: str, journals: int) -> dict[str, Any]:
    """One probe by the waybook at `code` (this file's probe, which runs alone under any checkout); on
    a PostgreSQL server of this machine whose data directory WAYBOOK_BENCH_POSTGRES_DATA names, also
    the CPU seconds the server's processes spent for it (`server_cpu`)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, str(PROBE), op, url, str(journals)]
    data = os.environ.get("WAYBOOK_BENCH_POSTGRES_DATA") if url.startswith("postgres") else None
    spent = server_cpu(Path(data)) if data else None
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd="/")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if data and spent is not None:
        result["server_cpu"] = server_cpu(Path(data)) - spent
    return result


def server_cpu(data: Path) -> float:
    """CPU seconds of the PostgreSQL server's ended backends so far (user + system of the postmaster's
    reaped children, /proc), once no client backend is left: a probe's connections all ended, their
    CPU is in. Every run of a probe connects anew, so its backends' whole lives are counted (to the
    clock tick: read the sum over many probes)."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    for _ in range(5_000):  # a closed connection's backend ends within moments of the client's exit
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
        if not any(_is_client_backend(child) for child in children):
            break
        time.sleep(0.002)
    fields = Path(f"/proc/{postmaster}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime


def _is_client_backend(pid: str) -> bool:
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return False
    return not title.startswith(
        (
            b"postgres: checkpointer",
            b"postgres: background writer",
            b"postgres: walwriter",
            b"postgres: autovacuum launcher",
            b"postgres: logical replication launcher",
        )
    )


def pair_rows(kind: str, url: str, journals: int, before: Path, rounds: int) -> list[dict[str, Any]]:
    rows = []
    for op, name in OPS.items():
        sides: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for round_ in range(rounds):
            order = [("before", before), ("after", ROOT)]
            for side, code in order if round_ % 2 == 0 else order[::-1]:
                sides[side].append(probe(code, op, url, journals))
        pairs = list(zip(sides["before"], sides["after"], strict=True))
        row: dict[str, Any] = {"store": kind, "row": name, "journals": journals, "rounds": rounds}
        for field, scale in (("seconds", 1000), ("cpu", 1000)):
            for side in ("before", "after"):
                row[f"{field}_ms_{side}"] = round(statistics.median(p[field] for p in sides[side]) * scale, 1)
            row[f"{field}_ratio"] = round(statistics.median(a[field] / b[field] for b, a in pairs), 3)
        if "server_cpu" in sides["after"][0]:  # tick-grained per probe: the sums over the rounds
            for side in ("before", "after"):
                row[f"server_cpu_ms_{side}"] = round(
                    sum(p["server_cpu"] for p in sides[side]) / rounds * 1000, 1
                )
            row["server_cpu_ratio"] = round(
                row["server_cpu_ms_after"] / max(row["server_cpu_ms_before"], 1e-9), 3
            )
        row["rss_mb_before"] = round(statistics.median(p["rss_kb"] for p in sides["before"]) / 1024, 1)
        row["rss_mb_after"] = round(statistics.median(p["rss_kb"] for p in sides["after"]) / 1024, 1)
        if "selects" in sides["after"][0]:
            row["selects_before"] = sides["before"][-1].get("selects")
            row["selects_after"] = sides["after"][-1]["selects"]
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--journals", type=int, default=100_000)
    parser.add_argument("--against", default="main", help="the revision measured as before (default main)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stores", nargs="*", default=["sqlite", "postgres"])
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with checkout(args.against) as before:
        for kind in args.stores:
            urls = store_urls(args.journals)  # (a built store: its search index is not needed here)
            if kind in urls and not (CACHE / str(args.journals) / f"{kind}.done").exists():
                ensure(args.journals, only=kind)
            if kind in urls:
                rows += pair_rows(kind, urls[kind], args.journals, before, args.rounds)
    print(f"\npages of big stores: {args.journals} journals; before = {args.against}, after = this checkout")
    head = f"{'wall ms b/a':>15} {'ratio':>6} {'CPU ms b/a':>15} {'ratio':>6} {'SELECTs b/a':>12}"
    print(f"{'store':9} {'row':18} {head}")
    for row in rows:
        selects = (
            f"{row.get('selects_before', '')}/{row.get('selects_after', '')}"
            if "selects_after" in row
            else ""
        )
        print(
            f"{row['store']:9} {row['row']:18} "
            f"{row['seconds_ms_before']:>7.0f}/{row['seconds_ms_after']:<7.0f} "
            f"{row['seconds_ratio']:>6.2f} {row['cpu_ms_before']:>7.0f}/{row['cpu_ms_after']:<7.0f} "
            f"{row['cpu_ratio']:>6.2f} {selects:>12}"
        )
    for row in rows:
        if "server_cpu_ms_after" in row:
            print(
                f"{row['store']:9} {row['row']:18} server CPU per probe (4 runs) "
                f"{row['server_cpu_ms_before']:.0f}/{row['server_cpu_ms_after']:.0f} ms, "
                f"ratio {row['server_cpu_ratio']:.2f}"
            )
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    kept = previous.get(str(args.journals), {})  # the rows of stores not run this time stay
    others = [
        {"against": kept.get("against"), **row}
        for row in kept.get("rows", [])
        if row["store"] not in args.stores
    ]
    rows = others + [{"against": args.against, **row} for row in rows]
    previous[str(args.journals)] = {"against": args.against, "rows": rows}
    RESULTS.write_text(json.dumps(previous, indent=2) + "\n")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
