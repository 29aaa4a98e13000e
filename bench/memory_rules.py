"""What the journal's memory rules cost: appends and replays of memory records, with and without them.

The same records go to an in-memory journal whose header declares `working_memory` (the memory rules
run on every append and replay) and to one whose header declares `session` (they do not). Rows are
paired run by run, so the ratio is what to compare. Run: `python bench/memory_rules.py [--quick]`;
prints a table and writes bench/memory_rules.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.model import MemoryWrite, NewRecord
from waybook.model._records import Header, MemoryDelete

RESULTS = Path(__file__).resolve().parent / "memory_rules.json"
AT = "2026-12-01T09:00:00.000Z"


def records(count: int, files: int) -> list[NewRecord]:
    """Writes cycling over `files` paths, with a delete every 50 records (a working memory's life)."""
    out = []
    for i in range(count):
        path = f"/memories/notes/n{i % files}.md"
        if i % 50 == 49:
            body: MemoryWrite | MemoryDelete = MemoryDelete(paths=(f"/memories/notes/n{(i - 1) % files}.md",))
        else:
            text = f"note {i}: " + "x" * 200
            body = MemoryWrite(path=path, text=text, digest=content_digest(text))
        out.append(NewRecord(id=f"r{i}", at=AT, body=body))
    return out


def journal(role: str) -> InMemoryJournal:
    j = InMemoryJournal(role)
    header = Header(journal=role, creator="bench", role=role, metadata={"scope": "bench"})
    j.append([NewRecord(id="h", at=AT, body=header)], expected=j.head())
    return j


def append_rate(role: str, batch: list[NewRecord]) -> tuple[float, list[bytes]]:
    j = journal(role)
    start = time.perf_counter()
    for record in batch:
        try:
            j.append([record], expected=j.head())
        except Exception:
            continue
    elapsed = time.perf_counter() - start
    return len(batch) / elapsed, list(j.read_lines())


def replay_rate(lines: list[bytes]) -> float:
    start = time.perf_counter()
    InMemoryJournal.from_lines(lines)
    return len(lines) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    count, runs = (2_000, 3) if args.quick else (10_000, 5)
    rows: dict[str, list[float]] = {}
    for files in (50, 250):
        batch = records(count, files)
        for _ in range(runs):
            memory, memory_lines = append_rate("working_memory", batch)
            session, session_lines = append_rate("session", batch)
            rows.setdefault(f"append, {files} files", []).append(memory / session)
            rows.setdefault(f"replay, {files} files", []).append(
                replay_rate(memory_lines) / replay_rate(session_lines)
            )
    print(f"{'row':<22} {'rules/no rules (median of ' + str(runs) + ' paired runs)':>48}")
    result = {}
    for name, ratios in rows.items():
        median = statistics.median(ratios)
        result[name] = {"ratio": median, "runs": ratios}
        print(f"{name:<22} {median:>48.2f}")
    RESULTS.write_text(json.dumps({"records": count, "rows": result}, indent=2) + "\n")


if __name__ == "__main__":
    main()
