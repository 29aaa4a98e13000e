"""waybook benchmarks: prints a table and writes bench/results.json.

Every row is measured against a raw baseline in the same run, so the ratio is what to compare across
machines; absolute rates on shared machines are noisy. Run: `python bench/run.py [--quick] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.workload import session_records

RESULTS = Path(__file__).resolve().parent / "results.json"


@attrs.frozen
class Row:
    name: str
    value: float
    unit: str
    baseline: float | None = None
    target: str = ""
    passed: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.value / self.baseline if self.baseline else None


def rate(count: int, fn: Callable[[], object], *, repeat: int = 3) -> float:
    """Best-of-`repeat` throughput of `fn`, which does `count` operations."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return count / best


def median_seconds(fn: Callable[[], object], *, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# --- issue 2: journal core ------------------------------------------------------------------------


def bench_core(quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook.journal import GENESIS, InMemoryJournal, Record
    from waybook.journal.ledger import iter_chain
    from waybook.journal.verify import verify

    n_append = 20_000 if quick else 100_000
    records = list(session_records(n_append))
    sizes = [len(msgspec.json.encode(r)) for r in records[1:101]]

    def raw_append() -> None:
        encode = msgspec.json.encode
        out: list[bytes] = []
        for r in records:
            out.append(encode(r))

    def journal_append() -> None:
        journal = InMemoryJournal()
        head = GENESIS
        for r in records:
            head = journal.append((r,), expected=head).head

    baseline = rate(len(records), raw_append)
    value = rate(len(records), journal_append)
    yield Row(
        "core.append.in_memory",
        value,
        "appends/s",
        baseline,
        ">= 150k/s",
        value >= 150_000,
        f"one ~{int(statistics.mean(sizes))}-byte record per append; baseline msgspec encode + list append",
    )

    n_replay = 50_000 if quick else 200_000
    source = InMemoryJournal()
    head = GENESIS
    batch = list(session_records(n_replay))
    for start in range(0, len(batch), 1000):
        head = source.append(batch[start : start + 1000], expected=head).head
    lines = list(source.read_lines())
    blob = b"\n".join(lines) + b"\n"
    decoder = msgspec.json.Decoder(Record)
    raw_lines = rate(len(lines), lambda: decoder.decode_lines(blob))
    raw_loop = rate(len(lines), lambda: [decoder.decode(line) for line in lines])
    chain = rate(len(lines), lambda: sum(1 for _ in iter_chain(lines)))
    yield Row(
        "core.replay.decode_and_chain",
        chain,
        "records/s",
        raw_lines,
        ">= 40% of decode_lines",
        chain >= 0.4 * raw_lines,
        f"{n_replay} records; baseline msgspec decode_lines on the same bytes",
    )
    yield Row(
        "core.replay.vs_decode_loop",
        chain,
        "records/s",
        raw_loop,
        "(stricter baseline)",
        None,
        "same replay against a per-line msgspec decode loop",
    )
    full = rate(len(lines), lambda: verify(source), repeat=2)
    yield Row(
        "core.verify.chain_and_rules", full, "records/s", raw_lines, "", None, "verify(): chain + rules"
    )


SUITES: dict[str, Callable[[bool], Iterator[Row]]] = {
    "core": bench_core,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", choices=sorted(SUITES), action="append", help="run only these suites")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    print(f"{'benchmark':36} {'value':>14} {'baseline':>14} {'ratio':>7}  {'target':24} ok")
    for name in args.only or SUITES:
        for row in SUITES[name](args.quick):
            rows.append(row)
            base = f"{row.baseline:14,.0f}" if row.baseline else " " * 14
            ratio = f"{row.ratio:7.2f}" if row.ratio is not None else " " * 7
            ok = {True: "yes", False: "NO", None: ""}[row.passed]
            print(f"{row.name:36} {row.value:14,.0f} {base} {ratio}  {row.target:24} {ok}", flush=True)
    payload: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "quick": args.quick,
        "rows": [{**attrs.asdict(r), "ratio": r.ratio} for r in rows],
    }
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if all(r.passed is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
