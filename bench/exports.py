"""Import and export rows (issue 7)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import Row, rate
from bench.workload import session_records


def bench_export(quick: bool) -> Iterator[Row]:
    import json

    from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row
    from waybook.formats.pi._codec import import_pi
    from waybook.journal import InMemoryJournal
    from waybook.model import GENESIS

    real = (
        Path(__file__).resolve().parent.parent.parent
        / "shared"
        / "fixtures"
        / "pi"
        / "before-compaction.jsonl"
    )
    if real.is_file():
        data = real.read_bytes()
        n_pi = len(import_pi(data).records)
        value = rate(n_pi, lambda: import_pi(data), repeat=5)
        baseline = rate(n_pi, lambda: [json.loads(x) for x in data.splitlines()], repeat=5)
        yield Row(
            "export.import_pi.real_session",
            value,
            "records/s",
            baseline,
            "",
            None,
            f"{real.name}: {len(data) / 2**20:.1f} MiB, {n_pi} records; baseline json.loads of its lines",
        )
    n = 20_000 if quick else 100_000
    journal = InMemoryJournal("bench")
    head = GENESIS
    records = list(session_records(n))
    for start in range(0, n, 2000):
        head = journal.append(records[start : start + 2000], expected=head).head

    def export() -> None:
        for row in TrajectoryExporter(journal).rows("openai", Selection("active")):
            encode_row(row)

    value = rate(n, export, repeat=2)
    yield Row(
        "export.openai.records",
        value,
        "records/s",
        None,
        "",
        None,
        f"one {n:,}-record trajectory to OpenAI JSONL",
    )
