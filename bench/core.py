"""Journal core rows (issue 2): appends, replay and verification against raw msgspec."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import Row, paired_rates, rate
from bench.workload import session_records


def bench_core(quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook.journal import InMemoryJournal
    from waybook.journal._ledger import iter_chain
    from waybook.journal._verify import verify
    from waybook.model import GENESIS, Record

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

    def inline_append() -> None:
        from bench.floor import InlineJournal

        journal = InlineJournal()
        head = GENESIS
        for r in records:
            head = journal.append((r,), expected=head).head

    baseline, value = paired_rates(len(records), raw_append, journal_append)
    floor, value_again = paired_rates(len(records), inline_append, journal_append)
    yield Row(
        "core.append.in_memory",
        value,
        "appends/s",
        baseline,
        ">= 150k/s",
        value >= 150_000,
        f"one ~{int(statistics.mean(sizes))}-byte record per append; baseline msgspec encode + list append",
    )
    yield Row(
        "core.append.inline_floor",
        value_again,
        "appends/s",
        floor,
        "(what Python allows here)",
        None,
        "the adapter against the same contract inlined into one function (bench/floor.py), same run",
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
    raw_lines, chain = paired_rates(
        len(lines), lambda: decoder.decode_lines(blob), lambda: sum(1 for _ in iter_chain(lines))
    )
    raw_loop, chain_again = paired_rates(
        len(lines),
        lambda: [decoder.decode(line) for line in lines],
        lambda: sum(1 for _ in iter_chain(lines)),
    )
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
        chain_again,
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
