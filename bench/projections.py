"""Projection rows (issue 4): tree, context and incremental folds."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import Row, median_seconds, rate
from bench.workload import write_journal_file


def bench_projections(quick: bool) -> Iterator[Row]:
    import tempfile

    import msgspec

    from waybook.journal import JsonlJournal
    from waybook.model import Record
    from waybook.projections import (
        ContextProjection,
        SnapshotStore,
        TreeProjection,
        at_seq,
        replay,
    )
    from waybook.projections._timeline import Timeline

    tmp = Path(tempfile.mkdtemp(prefix="waybook-bench-"))
    n = 200_000 if quick else 1_000_000
    big = tmp / "big.jsonl"
    write_journal_file(big, n)
    decoder = msgspec.json.Decoder(Record)
    raw = rate(n, lambda: decoder.decode_lines(big.read_bytes()), repeat=2)
    with JsonlJournal(big, create=False) as journal:
        value = rate(n, lambda: replay(ContextProjection(), journal), repeat=2)
        yield Row(
            "projections.replay.tree_and_context",
            value,
            "records/s",
            raw,
            ">= 25% of decode_lines",
            value >= 0.25 * raw,
            f"{n:,} records read from a JSONL journal; baseline decode_lines of the same bytes",
        )
    yield from incremental_rows(tmp, quick)

    middle = n // 2 + 4_321
    with JsonlJournal(big, create=False) as journal:
        timeline = Timeline(journal, every=10_000)
        samples = [median_seconds(lambda k=k: timeline.at(middle + k * 97), repeat=1) for k in range(9)]
        travel = statistics.median(samples) * 1000
        yield Row(
            "projections.time_travel.middle_ms",
            travel,
            "ms",
            None,
            "< 50 ms median",
            travel < 50,
            f"tree at seq ~{middle:,} of {n:,} from a snapshot every 10k (O(1) restore + fold the rest)",
        )
        store = SnapshotStore.build(TreeProjection(), journal, every=100_000 if not quick else 20_000)
        json_samples = [
            median_seconds(lambda k=k: at_seq(TreeProjection(), journal, middle + k * 97, store), repeat=1)
            for k in range(3)
        ]
    yield Row(
        "projections.time_travel.json_snapshot_ms",
        statistics.median(json_samples) * 1000,
        "ms",
        None,
        "",
        None,
        "the same through encoded JSON snapshots (persistable; decode dominates)",
    )
    for path in tmp.iterdir():
        path.unlink()
    tmp.rmdir()


def incremental_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    """Median cost of one append plus keeping tree + context current, at 1k and at a large size."""
    from waybook.journal import JsonlJournal
    from waybook.model import NewRecord, UserMessage, text
    from waybook.projections import ContextProjection, LiveProjection

    medians = {}
    for size in (1_000, 200_000 if quick else 1_000_000):
        path = tmp / f"inc-{size}.jsonl"
        write_journal_file(path, size)
        with JsonlJournal(path, create=False) as journal:
            live = LiveProjection(ContextProjection(), journal)
            samples = []
            for i in range(300):
                leaf = live.state.tree.leaf_id
                new = NewRecord(
                    id=f"inc{i}",
                    at="2026-12-01T09:00:00.000Z",
                    body=UserMessage(parent=leaf, content=text("x" * 150)),
                )
                journal.append([new], expected=journal.head())
                start = time.perf_counter()
                live.refresh()
                samples.append(time.perf_counter() - start)
        medians[size] = statistics.median(samples) * 1e6
    small, large = medians.values()
    yield Row(
        "projections.incremental.refresh_us",
        large,
        "us",
        small,
        "<= 1.5x the 1k median",
        large <= 1.5 * small,
        f"median refresh after one append: {small:.1f} us at 1k vs {large:.1f} us at the large size",
    )
