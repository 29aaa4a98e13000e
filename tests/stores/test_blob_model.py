"""Every store's blobs against a simple model, through random puts (bytes, streams, short reads; empty,
one part, several parts), releases, the passing of hours, references from journals, purges, reads and
collections: the store keeps exactly the blobs the model keeps, whole, and a collection removes exactly
what the rules say."""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.stores.test_blobs import KINDS, age_everything, store_url
from waybook import Session
from waybook.stores import open_store
from waybook.stores._blobs import CHUNK, DEFAULT_LEASE, BlobRef, BlobReferencedError

HOURS = 2 * 3600.0
"""How far a step moves the clock: far past the lease and any grace, so no step lands near a boundary."""
SIZES = [0, 1, 5000, CHUNK, CHUNK + 1, 2 * CHUNK + 7]


def blob_bytes(seed: int, size: int) -> bytes:
    return (seed.to_bytes(2, "big") * (size // 2 + 1))[:size]


class ShortReads(io.RawIOBase):
    """A stream that returns at most 4,000 bytes per read, as a pipe or socket may."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = bytes(self._data[: min(4000, len(self._data) if size < 0 else size)])
        self._data = self._data[len(chunk) :]
        return chunk


@attrs.define
class Lease:
    """One put's lease: the journals made before it (a reference from a later one refuses its release)
    and when it was taken."""

    since: int
    taken: float


@attrs.define
class Stored:
    data: bytes
    stored_at: float


class BlobModel(RuleBasedStateMachine):
    kind = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="waybook-blob-model-"))
        self.store: Any = open_store(store_url(self.kind, self.tmp))
        self.now = 0.0
        self.blobs: dict[str, Stored] = {}
        self.refs: dict[str, BlobRef] = {}
        self.journals: dict[str, str] = {}  # journal id -> the digest it references
        self.made = 0
        self.leases: dict[str, list[Lease]] = {}  # digest -> the leases its puts took, oldest first

    @initialize()
    def start(self) -> None:
        assert list(self.store.blobs.digests()) == []

    @rule(data=st.data())
    def release_a_put(self, data: st.DataObject) -> None:
        """A writer dropping the very lease its put took (the ref that put returned)."""
        digest = data.draw(st.sampled_from(sorted(self.blobs) or ["none"]))
        held = self.leases.get(digest, [])
        if not held:
            return
        ref = self.store.blobs.put(self.blobs[digest].data, media_type="text/plain")  # takes a lease...
        self.blobs[digest].stored_at = self.now
        held.append(Lease(self.made, self.now))
        self.store.blobs.release(ref)  # ...and drops exactly that one: nothing references it since
        held.pop()

    @rule(
        seed=st.integers(0, 3),
        size=st.sampled_from(SIZES),
        form=st.sampled_from(["bytes", "stream", "short reads"]),
    )
    def put(self, seed: int, size: int, form: str) -> None:
        data = blob_bytes(seed, size)
        source = {"bytes": data, "stream": io.BytesIO(data), "short reads": ShortReads(data)}[form]
        ref = self.store.blobs.put(source, media_type="application/octet-stream")
        assert ref.size == size
        known = self.blobs.get(ref.digest)
        self.blobs[ref.digest] = Stored(known.data if known else data, self.now)
        self.refs[ref.digest] = ref
        self.leases.setdefault(ref.digest, []).append(Lease(self.made, self.now))

    @precondition(lambda self: self.blobs)
    @rule(data=st.data(), form=st.sampled_from(["bytes", "stream", "short reads"]))
    def put_again(self, data: st.DataObject, form: str) -> None:
        """A writer about to reference bytes that may be old: they become young and leased again."""
        digest = data.draw(st.sampled_from(sorted(self.blobs)))
        stored = self.blobs[digest].data
        source = {"bytes": stored, "stream": io.BytesIO(stored), "short reads": ShortReads(stored)}[form]
        assert self.store.blobs.put(source, media_type="text/plain").digest == digest
        self.blobs[digest] = Stored(stored, self.now)
        self.leases.setdefault(digest, []).append(Lease(self.made, self.now))

    @precondition(lambda self: self.blobs)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        """A writer dropping a lease (given the digest: the oldest lease the store object holds on it):
        refused while a record written since that put references the blob (a collection running
        meanwhile could otherwise delete a referenced blob); every other lease on it stays."""
        digest = data.draw(st.sampled_from(sorted(self.blobs)))
        held = self.leases.get(digest, [])
        if not held:
            self.store.blobs.release(digest)  # no lease of this object's: nothing to drop
            return
        since = held[0].since
        referenced = any(d == digest and int(j[1:]) >= since for j, d in self.journals.items())
        if referenced:
            with pytest.raises(BlobReferencedError):
                self.store.blobs.release(digest)
            return
        self.store.blobs.release(digest)
        held.pop(0)

    @rule()
    def hours_pass(self) -> None:
        age_everything(self.store, HOURS)
        self.now += HOURS

    @precondition(lambda self: self.blobs)
    @rule(data=st.data())
    def reference(self, data: st.DataObject) -> None:
        digest = data.draw(st.sampled_from(sorted(self.blobs)))
        journal_id = f"j{self.made}"
        self.made += 1
        Session.create(self.store.create(journal_id)).user([self.refs[digest].block()])
        self.journals[journal_id] = digest

    @precondition(lambda self: self.journals)
    @rule(data=st.data())
    def purge(self, data: st.DataObject) -> None:
        journal_id = data.draw(st.sampled_from(sorted(self.journals)))
        self.store.purge(journal_id, reason="the model forgets it")
        del self.journals[journal_id]

    @precondition(lambda self: self.blobs)
    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        digest = data.draw(st.sampled_from(sorted(self.blobs)))
        assert self.store.blobs.read(digest) == self.blobs[digest].data
        with self.store.blobs.open(digest) as stream:
            assert stream.read(7) + stream.read() == self.blobs[digest].data

    @rule(grace=st.sampled_from([0.0, 600.0]))
    def collect(self, grace: float) -> None:
        referenced = set(self.journals.values())
        expected = {
            digest
            for digest, stored in self.blobs.items()
            if digest not in referenced and not self.live(digest) and self.now - stored.stored_at >= grace
        }
        receipt = self.store.blobs.collect(grace=grace)
        assert set(receipt.removed) == expected
        for digest in expected:
            del self.blobs[digest]  # (its leases, all run out, stay the store object's to release)

    def live(self, digest: str) -> bool:
        return any(self.now - lease.taken < DEFAULT_LEASE for lease in self.leases.get(digest, []))

    @invariant()
    def the_store_holds_the_models_blobs_with_their_ages_and_leases(self) -> None:
        assert set(self.store.blobs.digests()) == set(self.blobs)
        engine, now = self.store.blobs.engine, time.time()
        for digest, stored in self.blobs.items():
            # Off by whole steps of HOURS if an age was not kept or refreshed; the margin is real time.
            assert abs(engine.age(digest, now) - (self.now - stored.stored_at)) < HOURS / 2, digest
        leased = {d for d in self.blobs if self.live(d)}
        assert engine.leased(now) & set(self.blobs) == leased

    def teardown(self) -> None:
        self.store.close()
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)


# On PostgreSQL every step is round trips (7 s): slow. The other stores run the same model by default.
@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=pytest.mark.slow) if k == "postgres" else k for k in KINDS]
)
def test_blobs_keep_and_collect_exactly_what_a_model_says(kind: str) -> None:
    if kind == "postgres":
        store_url(kind, Path())  # skips (or fails under CI=true) without a server, before hypothesis runs
    machine = type(f"BlobModel_{kind}", (BlobModel,), {"kind": kind})
    test = machine.TestCase
    test.settings = settings(max_examples=50, stateful_step_count=30, deadline=None)
    test().runTest()
