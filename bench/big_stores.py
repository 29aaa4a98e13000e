"""Big stores bench: 100,000 journals of 50 records (issue 50), `python -m bench.stores --journals N`.

Each store (directory `file:`, `sqlite:`, and PostgreSQL when a server is at hand) is built once through
the public API (a journal is created with its header, then its 49 messages appended as one batch) and
cached under /tmp/bigstores/N/ (a `.done` file marks a finished one; delete the folder to build again;
WAYBOOK_BIG_STORES_PARTS=K builds a PostgreSQL store with K processes, each its share of the ids).
A PostgreSQL store is copied row for row from the finished SQLite store of the same size when there is
one (bench/big_store_copy.py: the same DatabaseStore code wrote those rows; 100,000 journals in ~2.5
minutes where the public API takes about an hour), and its search index is the SQLite store's, labelled
with its URL (the same feed, position for position); WAYBOOK_BIG_STORES_PG=api builds it through the
public API instead.
Then every row runs in a fresh child process (`python -m bench.big_store_probe`), so the row pays what a
command pays (opening the store) and the child's peak RSS is the row's memory:

  open the store      `open_store(URL)` and close, in a fresh process (what every command pays)   < 100 ms
  ls first page       `waybook ls --store URL` (100 journals, each glanced at), in-process CLI     < 100 ms
  open one journal    `store.open(id)` of a random journal of an open store (median of 50)        < 10 ms
  serve front page    `ViewServer.front_page(1)`: open the store, count, prove the page's journals < 300 ms
  search              `waybook search WORD --store URL` with its index up to date                  < 200 ms
  verify --store      every journal proved; per-record cost at N against at N/10 (linear: < 2x)

Seconds are the median of the repeats inside the child (the first, cold run shown apart for `ls`).
Memory: the peak RSS of the child at N/10 and at N journals (bounded: within 2x).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.big_store_copy import copy_sqlite_to_postgres, relabel_index

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("WAYBOOK_BIG_STORES", "/tmp/bigstores"))
RESULTS = Path(__file__).resolve().parent / "big_stores.json"
RECORDS = 50
WORDS = "the agent read the file, ran the tests and summarised what failed and why it failed "

GOALS_MS = {"store": 100.0, "ls": 100.0, "open": 10.0, "front": 300.0, "search": 200.0}


def journal_id(n: int) -> str:
    return f"session-{n:06d}"


def build(url: str, journals: int, *, part: int = 0, parts: int = 1) -> None:
    """`journals` journals of RECORDS records each (a header, then alternating user and assistant
    messages appended as one batch), through the store's public API; with `parts`, only the journals
    numbered `part` modulo `parts` (a PostgreSQL store built by `parts` processes at once)."""
    from waybook.model import AssistantMessage, NewRecord, TextBlock, UserMessage
    from waybook.stores import open_store

    started = time.perf_counter()
    with open_store(url) as store:
        for n in range(part, journals, parts):
            if store.exists(journal_id(n)):  # an interrupted build goes on where it stopped
                journal = store.open(journal_id(n))
                if journal.head().seq == RECORDS:
                    journal.close()
                    continue
            else:
                journal = store.create(journal_id(n), metadata={"user": f"user-{n % 97}"})
            head = journal.head()
            parent = None
            batch = []
            for i in range(RECORDS - 1):
                text = f"journal {n} turn {i}: {WORDS}" + (f" marker{n}" if i == 0 else "")
                rid = f"r{i}"
                content = (TextBlock(text=text),)
                body: Any
                if i % 2 == 0:
                    body = UserMessage(parent=parent, content=content)
                else:
                    body = AssistantMessage(parent=parent, content=content, stop_reason="end_turn")
                batch.append(NewRecord(id=rid, at="2026-01-01T00:00:00Z", body=body))
                parent = rid
            journal.append(batch, expected=head)
            journal.close()
            if n and n % 10000 == 0:
                print(f"  built {n} journals in {time.perf_counter() - started:.0f} s", flush=True)


def store_urls(journals: int, place: Path | None = None) -> dict[str, str]:
    place = place or CACHE / str(journals)
    urls = {"directory": f"file:{place}/dir", "sqlite": f"sqlite:{place}/store.db"}
    postgres = os.environ.get("WAYBOOK_BENCH_POSTGRES")
    if postgres:
        urls["postgres"] = postgres_url(postgres, journals)
    return urls


def postgres_url(server: str, journals: int) -> str:
    """The PostgreSQL store of `journals` journals on `server`: its own schema `bigstore_N` (created here
    when missing), so the store of N and the one of N/10 live side by side."""
    import psycopg

    sys.path.insert(0, str(ROOT))
    from tests.helpers.pg_server import with_schema

    schema = f"bigstore_{journals}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}".encode())
    return with_schema(server, schema)


def ensure(journals: int, *, only: str | None = None) -> dict[str, str]:
    """The cached stores of `journals` journals, built first where missing. A store is built in
    WAYBOOK_BIG_STORES_SCRATCH when set (a tmpfs such as /dev/shm: creating 100,000 files there pays no
    fsync) and moved into the cache when finished; its search index is built in the cache."""
    place = CACHE / str(journals)
    place.mkdir(parents=True, exist_ok=True)
    scratch_root = os.environ.get("WAYBOOK_BIG_STORES_SCRATCH")
    urls = store_urls(journals)
    for kind, url in urls.items():
        if only is not None and kind != only:
            continue
        done, indexed = place / f"{kind}.done", place / f"{kind}.indexed"
        if done.exists():
            if not indexed.exists():
                probe("search", url, journals, index=place / f"{kind}.search.sqlite")  # builds the index
                indexed.write_text("built\n")
            continue
        local = kind != "postgres"
        sqlite_done = place / "sqlite.done"
        if not local and sqlite_done.exists() and os.environ.get("WAYBOOK_BIG_STORES_PG", "copy") == "copy":
            print(f"copying the sqlite store of {journals} journals into {url} ...", flush=True)
            started = time.perf_counter()
            copy_sqlite_to_postgres(place / "store.db", url)
            done.write_text(f"{time.perf_counter() - started:.1f} (copied from sqlite)\n")
            relabel_index(place / "sqlite.search.sqlite", place / f"{kind}.search.sqlite", url)
            indexed.write_text("copied from sqlite.search.sqlite\n")
            continue
        scratch = Path(scratch_root) / str(journals) if scratch_root and local else place
        scratch.mkdir(parents=True, exist_ok=True)
        built = store_urls(journals, scratch)[kind]
        print(f"building the {kind} store of {journals} journals ({built}) ...", flush=True)
        started = time.perf_counter()
        parts = 1 if local else int(os.environ.get("WAYBOOK_BIG_STORES_PARTS", "1"))
        if parts == 1:
            build(built + ("?durability=none" if local else ""), journals)
        else:  # a PostgreSQL server takes several builders at once (each its share of the ids)
            builders = [
                multiprocessing.Process(
                    target=build, args=(built, journals), kwargs={"part": k, "parts": parts}
                )
                for k in range(parts)
            ]
            for builder in builders:
                builder.start()
            for builder in builders:
                builder.join()
                if builder.exitcode != 0:
                    msg = f"a builder of the {kind} store failed ({builder.exitcode})"
                    raise SystemExit(msg)
        if scratch != place:
            name = built.split("/")[-1]
            shutil.move(str(scratch / name), str(place / name))
        done.write_text(f"{time.perf_counter() - started:.1f}\n")
        probe("search", url, journals, index=place / f"{kind}.search.sqlite")  # builds the index once
        indexed.write_text("built\n")
    return urls


def probe(op: str, url: str, journals: int, **options: Any) -> dict[str, Any]:
    """Run one row in a fresh child process; its timings and its peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "bench.big_store_probe", op, url, str(journals)]
    for key, value in options.items():
        argv += [f"--{key}", str(value)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd=ROOT)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def rows_for(kind: str, url: str, journals: int) -> list[dict[str, Any]]:
    index = CACHE / str(journals) / f"{kind}.search.sqlite"
    rows = []
    for op, name in (
        ("store", "open the store"),
        ("ls", "ls first page"),
        ("open", "open one journal"),
        ("front", "serve front page"),
        ("search", "search the store"),
    ):
        got = probe(op, url, journals, index=index)
        goal = GOALS_MS[op]
        rows.append(
            {
                "store": kind,
                "row": name,
                "journals": journals,
                "ms": round(got["seconds"] * 1000, 2),
                "cold_ms": round(got["cold"] * 1000, 2),
                "cpu_ms": round(got["cpu"] * 1000, 2),
                "goal_ms": goal,
                "met": got["seconds"] * 1000 < goal,
                "peak_rss_mb": round(got["rss_kb"] / 1024, 1),
            }
        )
    return rows


def verify_rows(kind: str, small: tuple[int, str], big: tuple[int, str]) -> list[dict[str, Any]]:
    """`verify --store` at N/10 and N journals: seconds per record at each, their ratio (linear: < 2x),
    and the peak RSS at each (bounded: < 2x)."""
    got = {n: probe("verify", url, n) for n, url in (small, big)}
    (n_small, _), (n_big, _) = small, big
    per_small = got[n_small]["seconds"] / (n_small * RECORDS)
    per_big = got[n_big]["seconds"] / (n_big * RECORDS)
    rss_small, rss_big = got[n_small]["rss_kb"], got[n_big]["rss_kb"]
    return [
        {
            "store": kind,
            "row": "verify --store, per record",
            "journals": n_big,
            "us_per_record": round(per_big * 1e6, 2),
            "us_per_record_at_tenth": round(per_small * 1e6, 2),
            "ratio": round(per_big / per_small, 2),
            "goal": "ratio < 2 (linear)",
            "met": per_big / per_small < 2,
            "seconds": round(got[n_big]["seconds"], 1),
            "peak_rss_mb": round(rss_big / 1024, 1),
            "peak_rss_mb_at_tenth": round(rss_small / 1024, 1),
            "rss_ratio": round(rss_big / rss_small, 2),
            "memory_met": rss_big / rss_small < 2,
        }
    ]


def run(
    journals: int, *, verify: bool = True, stores: list[str] | None = None, results: Path = RESULTS
) -> None:
    """Every row on the stores of `journals` journals (and memory beside the stores of a tenth);
    `stores` picks some of directory, sqlite and postgres; without `verify` no `verify --store` rows
    (each reads every record of both sizes)."""
    tenth = max(1, journals // 10)
    kinds = list(store_urls(journals)) if stores is None else stores
    urls = {kind: ensure(journals, only=kind)[kind] for kind in kinds}  # only these: others untouched
    small_urls = {kind: ensure(tenth, only=kind)[kind] for kind in kinds} if tenth != journals else {}
    rows: list[dict[str, Any]] = []
    for kind, url in urls.items():
        rows += rows_for(kind, url, journals)
        if tenth == journals:
            continue
        small_rows = rows_for(kind, small_urls[kind], tenth)
        for row, small_row in zip(rows[-len(small_rows) :], small_rows, strict=True):
            row["peak_rss_mb_at_tenth"] = small_row["peak_rss_mb"]
            row["rss_ratio"] = round(row["peak_rss_mb"] / small_row["peak_rss_mb"], 2)
        if verify:
            rows += verify_rows(kind, (tenth, small_urls[kind]), (journals, url))
    print(f"\nbig stores: {journals} journals of {RECORDS} records (memory at {tenth} beside it)")
    print(
        f"{'store':10} {'row':28} {'ms':>9} {'goal':>7} {'met':>4} {'RSS MB':>8} {'RSS x':>6} {'CPU ms':>7}"
    )
    for row in rows:
        if "ms" in row:
            print(
                f"{row['store']:10} {row['row']:28} {row['ms']:>9.1f} {row['goal_ms']:>7.0f} "
                f"{'yes' if row['met'] else 'NO':>4} {row['peak_rss_mb']:>8.1f} {row.get('rss_ratio', ''):>6}"
                f" {row['cpu_ms']:>7.1f}"
            )
        else:
            print(
                f"{row['store']:10} {row['row']:28} {row['us_per_record']:>7.1f}us x{row['ratio']:<5} "
                f"{'yes' if row['met'] else 'NO':>4} {row['peak_rss_mb']:>8.1f} {row['rss_ratio']:>6}"
                f"   ({row['seconds']} s; {row['us_per_record_at_tenth']} us at {tenth}; goal {row['goal']})"
            )
    results.write_text(json.dumps({"journals": journals, "records": RECORDS, "rows": rows}, indent=2) + "\n")
    print(f"\nwrote {results}")
