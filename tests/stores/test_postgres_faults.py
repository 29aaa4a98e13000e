"""The PostgreSQL store under real faults: writers SIGKILLed mid-transaction, backends terminated, the
server crashed and restarted, while several processes append and a reader tails the feed.

Counted, each must be 0: acknowledged appends lost, positions won twice, chain breaks, feed gaps and
reorderings seen by the tailing reader (or in the final feed).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import psycopg
import pytest

from tests.helpers.pg_server import Cluster, fresh_schema, with_schema
from waybook.journal import verify
from waybook.stores import CATALOG_ID, FeedEntry, open_store

ROOT = Path(__file__).resolve().parents[2]
JOURNALS = ["shared", "own0", "own1", "own2"]
FAULTS = ["kill", "terminate", "restart", "kill", "terminate", "restart"]


class WriterProcess:
    """A pg_fault_writer process and a thread collecting its complete acknowledgement lines."""

    def __init__(self, url: str, name: str, slot: int) -> None:
        self.slot = slot
        journal_ids = ["shared", f"own{slot}"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.stores.pg_fault_writer", url, name, *journal_ids],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.acks: list[tuple[str, int, str]] = []
        self._thread = threading.Thread(target=self._collect, daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            parts = line.split()
            if line.endswith("\n") and len(parts) == 3:  # a killed writer may leave half a line
                self.acks.append((parts[0], int(parts[1]), parts[2]))

    def kill(self) -> str:
        """SIGKILL (wherever it is: mid-transaction, mid-print); returns its stderr."""
        os.kill(self.process.pid, signal.SIGKILL)
        _, err = self.process.communicate(timeout=60)
        self._thread.join(timeout=10)
        return err


class TailingReader:
    """Tails the feed from position 0 in a thread, through every fault, recording what it sees."""

    def __init__(self, url: str) -> None:
        self.seen: list[FeedEntry] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._store = open_store(url)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        position = 0
        try:
            while not self._stop.is_set():
                for entry in self._store.feed(position):
                    self.seen.append(entry)
                    position = entry.position
                self._store.wait(position, 0.2)
        except BaseException as exc:
            self.error = exc

    def catch_up_and_stop(self, head: int) -> None:
        deadline = time.monotonic() + 60
        while (not self.seen or self.seen[-1].position < head) and time.monotonic() < deadline:
            if self.error is not None:
                break
            time.sleep(0.05)
        self._stop.set()
        self._thread.join(timeout=30)
        self._store.close()


def terminate_backends(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def progress(writers: list[WriterProcess]) -> int:
    return sum(len(w.acks) for w in writers)


def wait_for_progress(writers: list[WriterProcess], more: int) -> None:
    """Until live writers acknowledge `more` records (they recovered from the last fault)."""
    start = progress(writers)
    deadline = time.monotonic() + 90
    while progress(writers) < start + more:
        dead = [w.process.stderr.read() for w in writers if w.process.poll() is not None and w.process.stderr]
        assert not dead, f"a writer died: {dead}"
        assert time.monotonic() < deadline, "writers made no progress for 90s after a fault"
        time.sleep(0.05)


def run_faults(
    cluster: Cluster, base: str, url: str, live: list[WriterProcess], retired: list[WriterProcess]
) -> None:
    """Kill a writer, terminate every backend, crash the server, twice each, each once the writers
    have recovered from the one before."""
    rng = random.Random(17)
    wait_for_progress(live, 30)
    for number, fault in enumerate(FAULTS):
        time.sleep(rng.uniform(0.0, 0.3))  # land the fault anywhere in the writers' transactions
        if fault == "kill":
            victim = live.pop(rng.randrange(len(live)))
            victim.kill()
            retired.append(victim)
            live.append(WriterProcess(url, f"k{number}w{victim.slot}", victim.slot))
        elif fault == "terminate":
            assert terminate_backends(base) > 0
        else:
            cluster.restart_immediate()
        wait_for_progress(live, 30)


@pytest.mark.slow  # a stress test of kills and server restarts (5 s)
def test_kills_terminations_and_restarts_lose_no_acknowledged_append(pg_cluster: Cluster) -> None:
    base = pg_cluster.url
    url = with_schema(base, fresh_schema(base)) + "&retry_for=60"
    with open_store(url) as store:
        for journal_id in JOURNALS:
            store.create(journal_id)
    reader = TailingReader(url)
    live = [WriterProcess(url, f"w{n}", n) for n in range(3)]
    retired: list[WriterProcess] = []
    try:
        run_faults(pg_cluster, base, url, live, retired)
    finally:
        errors = [w.kill() for w in live if w.process.poll() is None]
    writers = retired + live

    with open_store(url) as store:
        committed: dict[str, dict[int, str]] = {}
        chain_breaks = 0
        for journal_id in JOURNALS:
            journal = store.open(journal_id)
            chain_breaks += not verify(journal).ok
            committed[journal_id] = {r.seq: r.id for r in journal.read()}
        feed = list(store.feed())
        head = store.feed_head()
    reader.catch_up_and_stop(head)

    acks = [ack for w in writers for ack in w.acks]
    lost = sum(committed[j].get(seq) != rid for j, seq, rid in acks)
    winners: dict[tuple[str, int], set[str]] = defaultdict(set)
    for j, seq, rid in acks:
        winners[(j, seq)].add(rid)
    won_twice = sum(len(ids) > 1 for ids in winners.values())
    positions = [e.position for e in feed]
    feed_gaps = sum(b != a + 1 for a, b in zip([0, *positions], positions, strict=False))
    by_journal: dict[str, list[int]] = defaultdict(list)
    for entry in feed:
        by_journal[entry.journal_id].append(entry.seq)
    reordered = sum(seqs != list(range(1, len(seqs) + 1)) for seqs in by_journal.values())
    seen = [(e.position, e.journal_id, e.seq) for e in reader.seen]
    reader_disagrees = sum(
        a != b for a, b in zip(seen, [(e.position, e.journal_id, e.seq) for e in feed], strict=False)
    )
    reader_gaps = sum(
        b != a + 1 for a, b in zip([0, *[p for p, _, _ in seen]], [p for p, _, _ in seen], strict=False)
    )

    assert reader.error is None, reader.error
    assert len(acks) >= 30 * (len(FAULTS) + 1)
    assert sum(len(c) for c in committed.values()) == sum(e.journal_id != CATALOG_ID for e in feed)
    print(f"{len(acks)} acknowledged, {len(feed)} fed, {len(writers)} writers, {len(FAULTS)} faults")
    counts = {
        "acknowledged appends lost": lost,
        "positions won twice": won_twice,
        "chain breaks": chain_breaks,
        "feed gaps": feed_gaps,
        "feed reorderings": reordered,
        "tailing reader: gaps": reader_gaps,
        "tailing reader: disagreements with the final feed": reader_disagrees,
    }
    assert counts == dict.fromkeys(counts, 0), (counts, errors)
    assert len(seen) == len(feed), "the tailing reader saw every committed record"
