"""Open, verify and repair of a journal whose last line is one long torn line: linear in its length.

Issue 12: the scanner used to copy the growing partial line once per 1 MiB chunk, so a 128 MB torn line
took 12-24 s on every open. Now each byte is read once (a torn line is never held in memory), so the
time per MB is flat. Rows for 16, 64 and 256 MB lines, measured in the same run; the last column is
each row's seconds per MB over the 16 MB row's (1.0 = linear; the old code was about 4x per 4x).

Usage: python -m bench.long_lines [--sizes 16,64,256] [--json bench/long_lines.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from waybook import JsonlJournal, Session
from waybook.journal import verify_file

MB = 1 << 20


def make_torn(path: Path, megabytes: int) -> None:
    with JsonlJournal(path) as journal:
        Session.create(journal, journal_id="long").user("before the long line")
    block = b'{"seq":3,"id":"long","at":"2026-12-01T09:00:00.000Z","prev":"' + b"x" * (MB - 64)
    with path.open("ab") as handle:
        handle.write(block[:MB])
        filler = b"y" * MB
        for _ in range(megabytes - 1):
            handle.write(filler)


def timed(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def open_close(path: Path) -> None:
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is not None
        assert journal.damage.torn


def repair_copy(source: Path, work: Path) -> Callable[[], object]:
    def run() -> None:
        shutil.copyfile(source, work)
        with JsonlJournal(work, create=False) as journal:
            receipt = journal.repair()
            assert receipt.repaired
            Path(receipt.quarantine_path or "").unlink()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,256")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=Path(__file__).with_name("long_lines.json"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in sizes:
            path = Path(tmp) / f"torn-{megabytes}.jsonl"
            make_torn(path, megabytes)
            work = Path(tmp) / "work.jsonl"
            # Repair includes copying the file back first (shutil.copyfile), timed on its own to subtract.
            copy = timed(lambda path=path, work=work: shutil.copyfile(path, work), args.repeat)
            rows.append(
                {
                    "megabytes": megabytes,
                    "open_s": timed(lambda path=path: open_close(path), args.repeat),
                    "verify_s": timed(lambda path=path: verify_file(path), args.repeat),
                    "repair_s": max(timed(repair_copy(path, work), args.repeat) - copy, 0.0),
                }
            )
            path.unlink()
            work.unlink(missing_ok=True)
    base = rows[0]
    print(f"{'torn line':>10} {'open s':>8} {'verify s':>9} {'repair s':>9}  per MB vs first row")
    for row in rows:
        scale = row["megabytes"] / base["megabytes"]
        ratios = [
            (row[k] / scale) / base[k] if base[k] else float("nan")
            for k in ("open_s", "verify_s", "repair_s")
        ]
        row["per_mb_vs_first"] = ratios
        times = f"{row['open_s']:>8.3f} {row['verify_s']:>9.3f} {row['repair_s']:>9.3f}"
        print(f"{row['megabytes']:>7} MB {times}  " + " / ".join(f"{r:.2f}" for r in ratios))
    args.json.write_text(json.dumps({"long_lines": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
