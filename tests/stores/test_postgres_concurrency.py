"""Issue 28: the PostgreSQL feed under many concurrent writers (threads and processes, on their own
journals and on a shared one) and several tailing readers, while backends are terminated, the server
is crashed and restarted, and a writer's transaction is held open in the middle of it all.

Every reader must see every committed record exactly once, in one order that every reader and the
final feed agree on: no gap, no duplicate, no reorder (positions 1, 2, 3, ... with no purges, and each
journal's records in seq order), and every acknowledged append must be in it.
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict

import psycopg
import pytest

from tests.helpers.pg_server import Cluster, fresh_schema, with_schema
from tests.stores.pg_fault_writer import Writer
from tests.stores.test_postgres_faults import TailingReader, WriterProcess, terminate_backends
from waybook import StaleWriterError
from waybook.codecs._wire import decode_record, seal
from waybook.model import Header, NewRecord, UserMessage, text
from waybook.stores import open_store

PROCESSES = 3
THREADS = 3
READERS = 3


class WriterThread:
    """A writer in this process (its own store object, so its own pool), round-robin over its own
    journal and the shared one, acknowledging `(journal, seq, id)` for every append that returned."""

    def __init__(self, url: str, name: str) -> None:
        self.acks: list[tuple[str, int, str]] = []
        self.error: BaseException | None = None
        self._name = name
        self._store = open_store(url)
        self._journals = ["shared", name]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            writers = [Writer(self._store.open(j)) for j in self._journals]
            i = 0
            while not self._stop.is_set():
                journal_id, writer = self._journals[i % 2], writers[i % 2]
                while True:
                    try:
                        done = writer.append(f"{self._name}-{i}", turn=i % 3 == 0)
                        break
                    except StaleWriterError:
                        writer.catch_up()
                self.acks.extend((journal_id, seq, rid) for seq, rid in done)
                i += 1
        except BaseException as exc:
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)
        self._store.close()


def hold_an_append_open(url: str, journal_id: str, seconds: float) -> None:
    """Begin an append to `journal_id` in a transaction of our own and keep it in flight for `seconds`
    before committing: records of other writers commit meanwhile, and readers must not pass it by."""
    with psycopg.connect(url) as conn:
        (last,) = conn.execute(
            "SELECT line FROM waybook_records WHERE journal_id = %s ORDER BY seq DESC LIMIT 1", (journal_id,)
        ).fetchone() or (None,)
        assert last is not None
        previous = decode_record(bytes(last))
        parent = None if isinstance(previous.body, Header) else previous.id
        body = UserMessage(parent=parent, content=text("held"))
        record = NewRecord(id=f"held-{time.monotonic_ns()}", at="2026-12-01T12:00:00.000Z", body=body)
        sealed, line = seal(previous.seq + 1, record, previous.digest)
        conn.execute(
            "SELECT waybook_append(%s, %s, %s, %s, %s)",
            (journal_id, previous.seq, previous.digest, [sealed.digest], [line]),
        )
        time.sleep(seconds)  # the fault under test: a transaction in flight for a while
        conn.commit()


def progress(writers: list[WriterProcess], threads: list[WriterThread]) -> int:
    return sum(len(w.acks) for w in writers) + sum(len(t.acks) for t in threads)


def await_progress(writers: list[WriterProcess], threads: list[WriterThread], more: int) -> None:
    start = progress(writers, threads)
    deadline = time.monotonic() + 90
    while progress(writers, threads) < start + more:
        assert all(t.error is None for t in threads), [t.error for t in threads]
        assert all(w.process.poll() is None for w in writers), "a writer process died"
        assert time.monotonic() < deadline, "no progress for 90 s after a fault"
        time.sleep(0.02)


def check_reader(got: list[tuple[int, str, int]], final: list[tuple[int, str, int]]) -> dict[str, int]:
    """What a reader that saw `got` (position, journal, seq) got wrong, counted."""
    positions = [p for p, _, _ in got]
    by_journal: dict[str, list[int]] = defaultdict(list)
    for _, journal_id, seq in got:
        by_journal[journal_id].append(seq)
    return {
        "gaps": sum(b != a + 1 for a, b in zip([0, *positions], positions, strict=False)),
        "duplicates": len(got) - len(set(got)),
        "reorders": sum(s != list(range(1, len(s) + 1)) for s in by_journal.values()),
        "disagreements with the final feed": sum(a != b for a, b in zip(got, final, strict=False)),
    }


@pytest.mark.slow  # a stress test of writers, readers, kills and restarts (6 s a seed)
@pytest.mark.parametrize("seed", [28, 2028])
def test_concurrent_writers_and_tailing_readers_see_one_gapless_order_across_kills_and_a_restart(
    pg_cluster: Cluster, seed: int
) -> None:
    rng = random.Random(seed)
    base = pg_cluster.url
    url = with_schema(base, fresh_schema(base)) + "&retry_for=60"
    names = ["shared", *(f"own{n}" for n in range(PROCESSES)), *(f"thread{n}" for n in range(THREADS))]
    with open_store(url) as store:
        for journal_id in names:
            store.create(journal_id)
    readers = [TailingReader(url) for _ in range(READERS)]
    processes = [WriterProcess(url, f"p{n}", n) for n in range(PROCESSES)]
    threads = [WriterThread(url, f"thread{n}") for n in range(THREADS)]
    faults = ["terminate", "hold", "restart", *rng.sample(["terminate", "hold", "restart"], 3)]
    try:
        await_progress(processes, threads, 40)
        for fault in faults:
            time.sleep(rng.uniform(0.0, 0.2))
            if fault == "terminate":
                terminate_backends(base)
            elif fault == "restart":
                pg_cluster.restart_immediate()
            else:
                hold_an_append_open(url.partition("&retry_for")[0], rng.choice(names), rng.uniform(0.2, 1.0))
            await_progress(processes, threads, 40)
    finally:
        for thread in threads:
            thread.stop()
        for process in processes:
            process.kill()

    with open_store(url) as store:
        committed = {j: {r.seq: r.id for r in store.open(j).read()} for j in names}
        head = store.feed_head()
        final = [(e.position, e.journal_id, e.seq) for e in store.feed()]
    for reader in readers:
        reader.catch_up_and_stop(head)
    assert all(t.error is None for t in threads), [t.error for t in threads]
    assert all(r.error is None for r in readers), [r.error for r in readers]

    acks = [a for w in processes for a in w.acks] + [a for t in threads for a in t.acks]
    assert [j for j, seq, rid in acks if committed[j].get(seq) != rid] == [], "acknowledged appends lost"
    assert sum(len(c) for c in committed.values()) + len([f for f in final if f[1] == "_catalog"]) == len(
        final
    )
    assert final[-1][0] == head == len(final)
    print(f"seed {seed}: {len(acks)} acknowledged, {len(final)} fed, faults {faults}")
    zero = {"gaps": 0, "duplicates": 0, "reorders": 0, "disagreements with the final feed": 0}
    assert check_reader(final, final) == zero
    for reader in readers:
        assert check_reader([(e.position, e.journal_id, e.seq) for e in reader.seen], final) == zero
        assert len(reader.seen) == len(final)
