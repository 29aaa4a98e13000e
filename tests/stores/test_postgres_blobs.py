"""The PostgreSQL blob tables' own promises, under real faults: a connection killed or cut mid-put leaves
no part of a blob visible, a retry stores it whole and once, a lease taken while a collection decides is
honoured, large blobs stream both ways, and a store made before blobs gets the tables when opened.
(Every test of tests/stores/test_blobs.py runs on PostgreSQL too.)"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import threading
import time
import tracemalloc
import urllib.parse
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.helpers.tcp_cutter import Cutter
from waybook import AsyncSession
from waybook.model import BlobBlock
from waybook.stores import open_async_store, open_store
from waybook.stores._blobs import CHUNK, BlobDigestError, MissingBlobError
from waybook.stores.postgres import ConnectionLostError, PostgresStore
from waybook.stores.postgres._blobs import PostgresBlobs
from waybook.stores.postgres._schema import MIGRATIONS, migrate


def connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


def with_query(url: str, **options: str) -> str:
    parts = urllib.parse.urlsplit(url)
    query = "&".join([parts.query, *(f"{k}={v}" for k, v in options.items())]).strip("&")
    return urllib.parse.urlunsplit(parts._replace(query=query))


def through(url: str, port: int) -> str:
    """`url` pointed at 127.0.0.1:`port` (the cutter)."""
    parts = urllib.parse.urlsplit(url)
    netloc = f"{parts.username or ''}{':' + parts.password if parts.password else ''}@127.0.0.1:{port}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@pytest.fixture
def cutter(pg_url: str) -> Iterator[Cutter]:
    parts = urllib.parse.urlsplit(pg_url)
    proxy = Cutter(parts.hostname or "127.0.0.1", parts.port or 5432)
    yield proxy
    proxy.close()


class Feed(io.RawIOBase):
    """A binary stream that serves `data` a megabyte per read and calls `before(n)` before its n-th
    read (n from 1): where a test lands its fault, between two parts of a put."""

    def __init__(self, data: bytes, before: Callable[[int], None]) -> None:
        self._data = memoryview(data)
        self._before = before
        self.reads = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        self.reads += 1
        self._before(self.reads)
        chunk = bytes(self._data[: CHUNK if size < 0 else min(size, CHUNK)])
        self._data = self._data[len(chunk) :]
        return chunk


def table_counts(url: str) -> tuple[int, int]:
    """(blob rows, part rows) in the store at `url`, seen from a connection of the test's own."""
    with connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM waybook_blobs), (SELECT count(*) FROM waybook_blob_parts)"
        ).fetchone()
    assert row is not None
    return int(str(row[0])), int(str(row[1]))


def test_a_backend_terminated_mid_put_leaves_no_part_visible_and_a_retry_stores_the_blob_whole(
    pg_url: str,
) -> None:
    name = f"waybook-put-{uuid.uuid4().hex[:8]}"
    url = with_query(pg_url, application_name=name)
    data = os.urandom(5 * CHUNK + 17)
    terminated: list[int] = []

    def terminate_the_put(read: int) -> None:
        if read != 3:  # two parts sent, inside the put's transaction
            return
        with connect(pg_url) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND state = 'idle in transaction'",
                (name,),
            ).fetchall()
        terminated.extend(1 for (ok,) in rows if ok)

    with open_store(url) as store:
        with pytest.raises(
            ConnectionLostError, match="stored whole or not at all: put the same bytes again"
        ) as lost:
            store.blobs.put(Feed(data, terminate_the_put), media_type="application/x-tar")
        assert "append" not in str(lost.value)  # the advice is a blob's, not a batch's
        assert terminated == [1]
        assert table_counts(pg_url) == (0, 0)  # no row, and no orphan part either
        assert list(store.blobs.digests()) == []
        ref = store.blobs.put(Feed(data, lambda _read: None), media_type="application/x-tar")
        assert store.blobs.read(ref) == data
        assert table_counts(pg_url) == (1, 6)


def test_a_stream_put_after_the_server_dropped_every_pooled_connection_goes_through(pg_url: str) -> None:
    name = f"waybook-idle-{uuid.uuid4().hex[:8]}"
    url = with_query(pg_url, application_name=name)
    data = os.urandom(3 * CHUNK)
    with open_store(url) as store:
        store.blobs.put(b"warm the pool", media_type="text/plain")
        with connect(pg_url) as conn:
            dropped = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
                (name,),
            ).fetchone()
        assert dropped is not None
        assert dropped[0]
        ref = store.blobs.put(Feed(data, lambda _read: None), media_type="application/octet-stream")
        assert store.blobs.read(ref) == data


def test_a_put_of_bytes_whose_connection_is_cut_is_sent_again_and_stored_once(
    pg_url: str, cutter: Cutter
) -> None:
    data = os.urandom(3 * CHUNK)
    with open_store(through(pg_url, cutter.port)) as store:
        cutter.arm_on(b"INSERT INTO waybook_blob_parts")  # the server takes the first part; the reply is lost
        ref = store.blobs.put(data, media_type="application/octet-stream")
        assert not cutter.disarm()
        assert cutter.cuts == ["to server"]
        assert store.blobs.read(ref) == data
    assert table_counts(pg_url) == (1, 3)


def test_a_lost_commit_reply_leaves_the_blob_whole_and_putting_it_again_stores_it_once(
    pg_url: str, cutter: Cutter
) -> None:
    data = os.urandom(2 * CHUNK + 1)

    def cut_at_commit(read: int) -> None:
        if read == 4:  # the stream is exhausted: what the put sends next ends with its COMMIT
            cutter.arm_on(b"COMMIT")

    with open_store(through(pg_url, cutter.port)) as store:
        with pytest.raises(ConnectionLostError):
            store.blobs.put(Feed(data, cut_at_commit), media_type="text/plain")
        assert not cutter.disarm()
        (digest,) = store.blobs.digests()  # it committed: whole, though its writer never heard so
        assert store.blobs.read(digest) == data
        assert store.blobs.put(Feed(data, lambda _read: None), media_type="text/plain").digest == digest
    assert table_counts(pg_url) == (1, 3)


def test_a_lease_taken_while_a_collection_decides_keeps_the_blob_even_with_no_grace(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert isinstance(store, PostgresStore)
        blobs = store.blobs.engine
        assert isinstance(blobs, PostgresBlobs)
        ref = store.blobs.put(b"about to be referenced again", media_type="text/plain")
        store.blobs.release(ref)
        with connect(pg_url) as writer:
            writer.execute("BEGIN")
            # A put of the same bytes, at its last step: the blob lock held, its lease not yet committed.
            writer.execute("SELECT waybook_blob_keep(%s, 'another-writer')", (ref.digest,))
            removed: list[list[str]] = []
            collection = threading.Thread(
                target=lambda: removed.append(blobs.delete_unless_young([ref.digest], grace=0))
            )
            collection.start()
            wait_until_a_lock_is_awaited(pg_url, unless_done=collection)
            writer.execute("COMMIT")
            collection.join(timeout=60)
        assert removed == [[]]
        assert store.blobs.exists(ref)


def wait_until_a_lock_is_awaited(url: str, *, unless_done: threading.Thread) -> None:
    """Until some backend waits for a lock (the collection, queued behind the writer), or the
    collection is over without waiting (it did not take the lock: the test then fails on its result)."""
    deadline = time.monotonic() + 60
    with connect(url) as conn:
        while unless_done.is_alive():
            row = conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, "the collection never waited for the writer's lock"
            time.sleep(0.01)


def test_a_large_blob_streams_in_and_out_without_being_held_in_memory(pg_url: str) -> None:
    size = 48 * CHUNK
    seed = os.urandom(CHUNK)
    written = hashlib.sha256()

    class Generated(io.RawIOBase):
        """48 MiB made a megabyte at a time, never all at once."""

        served = 0

        def readable(self) -> bool:
            return True

        def read(self, _size: int = -1) -> bytes:
            if self.served == size:
                return b""
            chunk = self.served.to_bytes(8, "big") + seed[8:]
            self.served += len(chunk)
            written.update(chunk)
            return chunk

    with open_store(pg_url) as store:
        tracemalloc.start()
        try:
            ref = store.blobs.put(Generated(), media_type="application/octet-stream")
            read = hashlib.sha256()
            with store.blobs.open(ref) as stream:
                while chunk := stream.read(CHUNK):
                    read.update(chunk)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert (ref.size, ref.digest, read.hexdigest()) == (size, written.hexdigest(), written.hexdigest())
    assert peak < 8 * CHUNK, f"{peak:,} bytes held at once for a {size:,}-byte blob"


def test_a_damaged_part_is_refused_on_read_and_a_blob_collected_under_a_reader_is_a_typed_error(
    pg_url: str,
) -> None:
    data = os.urandom(3 * CHUNK)
    with open_store(pg_url) as store:
        ref = store.blobs.put(data, media_type="application/octet-stream")
        with connect(pg_url) as conn:
            conn.execute("UPDATE waybook_blob_parts SET bytes = 'x'::bytea || bytes WHERE part = 1")
        with pytest.raises(BlobDigestError, match="is damaged"):
            store.blobs.read(ref)
        with store.blobs.open(ref) as stream:
            assert stream.read(10) == data[:10]
            with connect(pg_url) as conn:
                conn.execute("DELETE FROM waybook_blobs")  # what a collection does to an unreferenced blob
            with pytest.raises(MissingBlobError, match="collected while being read"):
                stream.read()


def test_a_store_made_before_blobs_gets_the_blob_tables_when_opened(pg_url: str) -> None:
    with connect(pg_url) as conn:
        assert migrate(conn, migrations=MIGRATIONS[:1]) == 1  # the schema as the first release left it
    with open_store(pg_url) as store:
        ref = store.blobs.put(b"kept beside the journals", media_type="text/plain")
        assert store.blobs.read(ref) == b"kept beside the journals"
    with connect(pg_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM waybook_schema ORDER BY version")]
    assert versions == [m.version for m in MIGRATIONS]


def test_an_async_session_on_the_async_store_keeps_an_oversized_output_as_a_blob(pg_url: str) -> None:
    output = "compiler output\n" * 100_000  # 1.6 MB: over the inline limit, and two parts

    async def write() -> str:
        store = await open_async_store(pg_url)
        async with store:
            blobs = store.blocking.blobs  # AsyncSession calls it in a worker thread
            session = await AsyncSession.create(await store.create("s"), blobs=blobs)
            result = await session.tool_result("c1", output, tool_name="bash")
            (block,) = result.body.content  # type: ignore[union-attr]
            assert isinstance(block, BlobBlock)
            return block.digest

    digest = asyncio.run(write())
    with open_store(pg_url) as store:
        assert store.blobs.read(digest) == output.encode()
