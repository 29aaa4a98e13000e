"""Blob leases belong to the writer that took them (issue 42.1): one writer's `release` never drops the
lease another writer took on the same bytes, so a record committed after a release, while a collection
runs, never points at a deleted blob.

On the old code the lease was one per process and store object: writer R stored bytes, decided not to
use them and released them, which also dropped writer W's lease on the same bytes; a collection whose
look at the journals came before W's commit then deleted the blob W's committed record references
(35 of 5,548 on file, 41 of 2,637 on SQLite, 50 of 5,213 on PostgreSQL in 40 s).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import pytest

from waybook import Session
from waybook.stores import JournalStore
from waybook.stores._blobs import BlobReferencedError, collect, references


class CommitsWhenLeasesAreAsked:
    """A blob engine that runs `step` (a writer's commit) the moment a collection asks which blobs are
    leased: after the collection looked at every journal and at the feed, before it deletes. The engine
    under it is the store's own; only the moment is chosen."""

    def __init__(self, engine: Any, step: Any) -> None:
        self._engine = engine
        self._step = step
        self.lease = getattr(engine, "lease", 3600.0)

    def leased(self, now: float) -> set[str]:
        if self._step is not None:
            step, self._step = self._step, None
            step()
        found: set[str] = self._engine.leased(now)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


def dangling(store: JournalStore) -> list[str]:
    """Blob digests that committed records reference and the store no longer holds."""
    found = []
    for info in store.list(limit=1000):
        with store.open(info.journal_id) as journal:
            found += [d for d in sorted(references(journal.read())) if not store.blobs.exists(d)]
    return found


@pytest.mark.parametrize("released", ["by its ref", "by digest"])
def test_a_release_never_drops_the_lease_another_writer_took_on_the_same_bytes(
    store: JournalStore, released: str
) -> None:
    data = b"the same bytes, stored by two writers"
    writer = Session(store.create("writer"))
    kept = store.blobs.put(data, media_type="text/plain")  # W: about to reference them
    dropped = store.blobs.put(data, media_type="text/plain")  # R: decides not to use them
    store.blobs.release(dropped if released == "by its ref" else dropped.digest)
    interleaved = CommitsWhenLeasesAreAsked(store.blobs.engine, lambda: writer.user([kept.block()]))
    receipt = collect(store, interleaved, grace=0)  # type: ignore[arg-type]
    assert kept.digest not in receipt.removed
    assert dangling(store) == []
    assert store.blobs.read(kept) == data


def test_each_put_takes_its_own_lease_and_each_release_drops_one(store: JournalStore) -> None:
    data = b"leased twice"
    first = store.blobs.put(data, media_type="text/plain")
    second = store.blobs.put(data, media_type="text/plain")
    store.blobs.release(first)
    assert collect(store, store.blobs.engine, grace=0).removed == ()  # the second lease holds it
    store.blobs.release(second)
    assert collect(store, store.blobs.engine, grace=0).removed == (first.digest,)


def test_a_writer_that_referenced_its_own_blob_still_cannot_release_it(store: JournalStore) -> None:
    ref = store.blobs.put(b"mine, referenced", media_type="text/plain")
    Session(store.create("s")).user([ref.block()])
    with pytest.raises(BlobReferencedError):
        store.blobs.release(ref)


@pytest.mark.slow
def test_two_writers_and_a_collector_racing_for_real_leave_no_dangling_reference(
    store: JournalStore,
) -> None:
    """The red team's race, bounded by work instead of time: W references blob i while R stores the same
    bytes and releases them, and a collector runs collect(grace=0) over and over."""
    count = 1500
    writer = Session(store.create("writer"))
    done = threading.Event()
    errors: list[BaseException] = []

    def referencing() -> None:
        for i in range(count):
            ref = store.blobs.put(f"blob {i}".encode(), media_type="text/plain")
            writer.user([ref.block()])

    def releasing() -> None:
        for i in range(count):
            ref = store.blobs.put(f"blob {i}".encode(), media_type="text/plain")
            with contextlib.suppress(BlobReferencedError):  # W's record came first: the lease stays
                store.blobs.release(ref)

    def collecting() -> None:
        while not done.is_set():
            store.blobs.collect(grace=0)

    def guarded(work: Any) -> Any:
        def run() -> None:
            try:
                work()
            except BaseException as exc:
                errors.append(exc)
                raise

        return run

    workers = [threading.Thread(target=guarded(w)) for w in (referencing, releasing)]
    collector = threading.Thread(target=guarded(collecting))
    collector.start()
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    done.set()
    collector.join()
    assert errors == []
    references_made = sum(1 for r in writer.journal.read() if references((r,)))
    assert references_made == count
    assert dangling(store) == []
