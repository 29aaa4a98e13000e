"""What erasable content costs (docs/erasure.md, issue 46): appending with salted commitments (a sealed
journal, schema 2) against today's append of the same records (schema 1), and the full proof of each,
every ratio paired in one run (alternate, flip the order each round, median of the per-round ratios).

The records are the real sessions of the shared fixtures (Claude Code, Codex, Pi), imported, appended
one record per call. Goals: append at most 10% slower (ratio >= 0.91), full proof at most 15% slower
(ratio >= 0.87). Two more rows say what an erasure costs to prove (a tenth of the records erased) and
to do.

Usage: python bench/erasure.py [--rounds N]. Prints a table and writes bench/erasure.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.speed_pairing import PairedRow, row  # noqa: E402
from tests.helpers.formats import SHARED_FIXTURES  # noqa: E402
from waybook.formats import import_claude_code, import_codex, import_pi  # noqa: E402
from waybook.journal import InMemoryJournal, JsonlJournal, erase, verify_file  # noqa: E402
from waybook.model import SEALED_SCHEMA, Header, NewRecord  # noqa: E402


def real_records() -> list[list[NewRecord]]:
    """Each real session's records after its header."""
    sessions: list[list[NewRecord]] = []
    for path in sorted(SHARED_FIXTURES.rglob("*.jsonl")):
        data = path.read_bytes()
        if "codex" in path.parts:
            records = import_codex(data).records
        elif "pi" in path.parts:
            records = import_pi(data).records
        else:
            records = import_claude_code(data, lenient=True).records
        sessions.append(list(records[1:]))
    return sessions


def header(schema: int, index: int) -> NewRecord:
    body = Header(journal=f"s{index}", creator="bench", schema=schema)
    return NewRecord(id=f"h{index}", at="2026-12-01T09:00:00.000Z", body=body)


def appender(
    sessions: list[list[NewRecord]], schema: int, make: Callable[[int], object]
) -> Callable[[], None]:
    """Append every session's records, one per call, to a fresh journal per session."""

    def run() -> None:
        for index, records in enumerate(sessions):
            journal = make(index)
            journal.append([header(schema, index)], expected=journal.head())  # type: ignore[attr-defined]
            for record in records:
                journal.append([record], expected=journal.head())  # type: ignore[attr-defined]
            journal.close()  # type: ignore[attr-defined]

    return run


def write_files(sessions: list[list[NewRecord]], schema: int, folder: Path) -> list[Path]:
    paths = []
    for index, records in enumerate(sessions):
        path = folder / f"s{index}-v{schema}.jsonl"
        with JsonlJournal(path, durability="none", sidecar=False) as journal:
            journal.append([header(schema, index)], expected=journal.head())
            for record in records:
                journal.append([record], expected=journal.head())
        paths.append(path)
    return paths


def prover(paths: list[Path]) -> Callable[[], None]:
    def run() -> None:
        for path in paths:
            assert verify_file(path).ok

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sessions = real_records()
    count = sum(len(s) + 1 for s in sessions)
    rows: list[PairedRow] = []
    with tempfile.TemporaryDirectory(prefix="waybook-bench-erasure-") as tmp:
        folder = Path(tmp)
        rows.append(
            row(
                "append in memory: sealed (salt + commitment) vs today's",
                count,
                appender(sessions, 1, lambda i: InMemoryJournal(f"s{i}")),
                appender(sessions, SEALED_SCHEMA, lambda i: InMemoryJournal(f"s{i}")),
                unit="records/s",
                goal=0.91,
                note="pure CPU: the seal is all there is",
                rounds=args.rounds,
            )
        )
        counter = iter(range(10**9))

        def jsonl(_: int) -> JsonlJournal:
            return JsonlJournal(folder / f"a{next(counter)}.jsonl", durability="none", sidecar=False)

        rows.append(
            row(
                "append to a JSONL file (no fsync): sealed vs today's",
                count,
                appender(sessions, 1, jsonl),
                appender(sessions, SEALED_SCHEMA, jsonl),
                unit="records/s",
                goal=0.91,
                note="durability none, so the seal is not hidden behind fsync",
                rounds=args.rounds,
            )
        )
        old, sealed = write_files(sessions, 1, folder), write_files(sessions, SEALED_SCHEMA, folder)
        rows.append(
            row(
                "full proof (verify_file): sealed vs today's",
                count,
                prover(old),
                prover(sealed),
                unit="records/s",
                goal=0.87,
                note="every record's digest, chain, batches and rules",
                rounds=args.rounds,
            )
        )
        erased = []
        for index, path in enumerate(sealed):
            copy = folder / f"erased{index}.jsonl"
            copy.write_bytes(path.read_bytes())
            with JsonlJournal(copy, sidecar=False) as journal:
                head = journal.head().seq
                erase(journal, range(2, head + 1, 10), reason="bench")
            erased.append(copy)
        rows.append(
            row(
                "full proof with a tenth of the records erased vs none",
                count,
                prover(sealed),
                prover(erased),
                unit="records/s",
                goal=None,
                note="an erased digest is finished from its state (OpenSSL via ctypes); erasures re-read",
                rounds=args.rounds,
            )
        )
    width = max(len(r.name) for r in rows)
    print(f"{'row':<{width}}  {'value':>12}  {'baseline':>12}  {'ratio':>6}  goal")
    for r in rows:
        verdict = "" if r.passed is None else ("ok" if r.passed else "MISSED")
        figures = f"{r.value:>12,.0f}  {r.baseline or 0:>12,.0f}  {r.ratio or 0:>6.3f}"
        print(f"{r.name:<{width}}  {figures}  {r.target} {verdict}")
    result = {
        "records": count,
        "sessions": len(sessions),
        "rows": [
            {
                "name": r.name,
                "value": round(r.value, 1),
                "baseline": round(r.baseline or 0, 1),
                "ratio": round(r.ratio or 0, 3),
                "unit": r.unit,
                "target": r.target,
                "passed": r.passed,
                "note": r.note,
            }
            for r in rows
        ],
    }
    (Path(__file__).parent / "erasure.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
