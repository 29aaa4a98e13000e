"""JSONL adapter rows (issue 3): appends, reopen, tail reads."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.measure import Row, paired_rates, rate
from bench.workload import session_records, write_journal_file


def bench_jsonl(quick: bool) -> Iterator[Row]:
    import os
    import tempfile
    import threading

    import msgspec

    from waybook.journal import JsonlJournal
    from waybook.model import GENESIS, Record, StaleWriterError

    tmp = Path(tempfile.mkdtemp(prefix="waybook-bench-"))
    n = 20_000 if quick else 100_000
    records = list(session_records(n))

    def raw_flush() -> None:
        encode = msgspec.json.encode
        with (tmp / "raw.jsonl").open("wb") as out:
            for r in records:
                out.write(encode(r) + b"\n")
                out.flush()

    def journal_appends(policy: str, count: int) -> Callable[[], None]:
        def run() -> None:
            path = tmp / f"{policy}.jsonl"
            path.unlink(missing_ok=True)
            with JsonlJournal(path, durability=policy) as journal:
                head = GENESIS
                for r in records[:count]:
                    head = journal.append((r,), expected=head).head

        return run

    baseline, value = paired_rates(n, raw_flush, journal_appends("flush", n))
    yield Row(
        "jsonl.append.flush",
        value,
        "appends/s",
        baseline,
        ">= 100k/s and >= 20%",
        value >= 100_000 and value >= 0.2 * baseline,
        "one record per append; baseline msgspec encode + write + flush per line",
    )

    n_sync = 300 if quick else 1_000

    def raw_fsync() -> None:
        encode = msgspec.json.encode
        fd = os.open(tmp / "raw-fsync.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        try:
            for r in records[:n_sync]:
                os.write(fd, encode(r) + b"\n")
                os.fsync(fd)
        finally:
            os.close(fd)

    sync_base, sync_value = paired_rates(n_sync, raw_fsync, journal_appends("fsync", n_sync), repeat=3)
    yield Row(
        "jsonl.append.fsync",
        sync_value,
        "appends/s",
        sync_base,
        ">= 90% of raw fsync",
        sync_value >= 0.9 * sync_base,
        "baseline write + fsync per line",
    )

    shared: list[float] = []

    def group_run() -> None:
        path = tmp / "group.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, durability="group") as journal:
            journal.append(records[:1], expected=GENESIS)
            per_thread = n_sync

            def writer(w: int) -> None:
                from waybook.model import NewRecord, Reset

                done = 0
                while done < per_thread:
                    try:
                        journal.append(
                            [NewRecord(id=f"w{w}-{done}", at=records[0].at, body=Reset())],
                            expected=journal.head(),
                        )
                        done += 1
                    except StaleWriterError:
                        pass

            threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            group = journal._group
            shared.append(group.synced_appends / max(group.fsyncs, 1))

    group_value = rate(4 * n_sync, group_run, repeat=3)
    yield Row(
        "jsonl.append.group_4_threads",
        group_value,
        "appends/s",
        sync_value,
        ">= 5x per-append fsync",
        group_value >= 5 * sync_value,
        f"4 writer threads, each append returns durable; baseline the fsync policy row; "
        f"{statistics.mean(shared):.1f} appends per fsync (4 is the most 4 writers can share)",
    )

    n_open = 200_000 if quick else 1_000_000
    big = tmp / "big.jsonl"
    write_journal_file(big, n_open)
    decoder = msgspec.json.Decoder(Record)

    def cold_open() -> None:
        with JsonlJournal(big, create=False) as journal:
            assert journal.head().seq == n_open

    raw, value = paired_rates(n_open, lambda: decoder.decode_lines(big.read_bytes()), cold_open, repeat=3)
    yield Row(
        "jsonl.open.verify",
        value,
        "records/s",
        raw,
        ">= 40% of decode_lines",
        value >= 0.4 * raw,
        f"cold open of {n_open:,} records (chain + rules); baseline decode_lines of the same bytes",
    )
    yield from open_memory_rows(big, n_open)
    for path in tmp.iterdir():
        path.unlink()
    tmp.rmdir()


def open_memory_rows(big: Path, n_open: int) -> Iterator[Row]:
    """Peak RSS of opening the file in a fresh process, per record, against a tenth of the file."""
    import subprocess

    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child would report our peak.
    probe = (
        "import sys; from waybook.journal import JsonlJournal;"
        "j = JsonlJournal(sys.argv[1], create=False); j.head();"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')),"
        "j._offsets.buffer_info()[1] * j._offsets.itemsize, j._ledger.rules.ids.nbytes())"
    )
    small = big.with_name("small.jsonl")
    with big.open("rb") as src, small.open("wb") as dst:
        for i, line in enumerate(src):
            if i >= n_open // 10:
                break
            dst.write(line)

    def peak(path: Path) -> tuple[int, int, int]:
        """Peak RSS of the open, and the bytes its offset index and id index hold."""
        out = subprocess.run(
            [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
        )
        kib, offsets, ids = map(int, out.stdout.split())
        return kib * 1024, offsets, ids

    (big_peak, offsets, ids), (small_peak, _, _) = peak(big), peak(small)
    records = n_open - n_open // 10
    per_record = (big_peak - small_peak) / records
    indexes = (offsets + ids) / n_open
    yield Row(
        "jsonl.open.peak_rss_per_record",
        per_record,
        "bytes",
        indexes,
        "O(1) apart from the indexes",
        per_record <= indexes + 8,
        f"peak RSS {big_peak / 2**20:.0f} MiB at {n_open:,} vs {small_peak / 2**20:.0f} MiB at "
        f"{n_open // 10:,}; baseline what the indexes hold per record: offsets "
        f"{offsets / n_open:.1f} B, ids {ids / n_open:.1f} B",
    )
