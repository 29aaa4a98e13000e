"""Search: the FTS5 index against scanning the store's feed, measured in the same run, paired.

For a SQLite store of SESSIONS x TURNS messages it measures, in alternating rounds:
- a query through the index against a linear scan of the feed for the same words (ratio scan / index);
- an incremental update after one new record against a full rebuild (ratio rebuild / update).
Prints a table and writes bench/search.json. Usage: python bench/search.py [SESSIONS] [TURNS] [ROUNDS]
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from waybook import Session
from waybook.model._records import AssistantMessage, UserMessage
from waybook.search import SearchIndex
from waybook.search._documents import document_of
from waybook.stores import open_store

WORDS = [f"w{n}" for n in range(2_000)]


def fill(url: str, sessions: int, turns: int) -> None:
    rng = random.Random(7)
    with open_store(url) as store:
        for s in range(sessions):
            session = Session(store.create(f"chat-{s}"))
            for _ in range(turns):
                session.user(" ".join(rng.choices(WORDS, k=12)))
                session.assistant(" ".join(rng.choices(WORDS, k=24)))


def scan(store: object, words: list[str]) -> int:
    found = 0
    for entry in store.feed():  # type: ignore[attr-defined]
        if isinstance(entry.record.body, UserMessage | AssistantMessage):
            doc = document_of(entry.record.body)
            if doc is not None and all(w in doc.text.split() for w in words):
                found += 1
    return found


def main() -> None:
    given = [int(a) for a in sys.argv[1:4]]
    sessions, turns, rounds = [*given, *(20, 100, 5)[len(given) :]]
    root = Path(tempfile.mkdtemp())
    url = f"sqlite:{root / 'store.db'}"
    fill(url, sessions, turns)
    query_ratios, update_ratios, rows = [], [], []
    with open_store(url) as store, SearchIndex(root / "index.sqlite", url) as index:
        start = time.perf_counter()
        records = index.rebuild(store)
        build = time.perf_counter() - start
        for n in range(rounds):
            words = [WORDS[n], WORDS[n + 1]]
            order = ("index", "scan") if n % 2 == 0 else ("scan", "index")
            timing = {}
            for name in order:
                start = time.perf_counter()
                index.search(" ".join(words), limit=20) if name == "index" else scan(store, words)
                timing[name] = time.perf_counter() - start
            query_ratios.append(timing["scan"] / timing["index"])
            Session(store.open("chat-0")).user(f"late {WORDS[n]}")
            start = time.perf_counter()
            index.update(store)
            incremental = time.perf_counter() - start
            start = time.perf_counter()
            index.rebuild(store)
            full = time.perf_counter() - start
            update_ratios.append(full / incremental)
            rows.append({"round": n, **timing, "update": incremental, "rebuild": full})
    result = {
        "sessions": sessions,
        "turns": turns,
        "records": records,
        "build_seconds": build,
        "build_records_per_second": records / build,
        "query_scan_over_index_median": statistics.median(query_ratios),
        "rebuild_over_update_median": statistics.median(update_ratios),
        "rounds": rows,
    }
    print(f"{'records':>10} {'build rec/s':>12} {'scan/index':>11} {'rebuild/update':>15}")
    print(
        f"{records:>10} {records / build:>12.0f} {result['query_scan_over_index_median']:>11.1f} "
        f"{result['rebuild_over_update_median']:>15.1f}"
    )
    (Path(__file__).parent / "search.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
