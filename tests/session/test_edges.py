"""Edges (issue 27, finding 6): an export cannot land inside a store; a blob a committed record
references cannot have its lease dropped under a running collection; a blob read back as a stream is
checked against its digest."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from waybook import Session
from waybook.cli import main
from waybook.stores import JournalStore, open_store
from waybook.stores._blobs import BlobDigestError, BlobReferencedError

KINDS = ["memory", "file", "sqlite"]


def url(kind: str, tmp_path: Path) -> str:
    return {"memory": "memory:", "file": f"file:{tmp_path / 'S'}", "sqlite": f"sqlite:{tmp_path / 'S.db'}"}[
        kind
    ]


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JournalStore]:
    with open_store(url(request.param, tmp_path)) as opened:
        yield opened


# --- an export's -o --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "target"),
    [("file", "S/journals/j2.jsonl"), ("file", "S/x.jsonl"), ("sqlite", "S.db-wal"), ("sqlite", "S.db")],
)
def test_an_export_into_the_stores_own_folder_is_refused_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, target: str
) -> None:
    location = url(kind, tmp_path)
    with open_store(location) as opened:
        Session.create(opened.create("j1")).user("hello")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    status = main(["export", "--store", location, "--format", "archival", "-o", str(tmp_path / target), "j1"])
    err = capsys.readouterr().err
    assert status == 2
    assert "inside the store" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    with open_store(location) as opened:
        assert not opened.exists("j2")


def test_an_export_beside_the_store_is_written(tmp_path: Path) -> None:
    location = url("file", tmp_path)
    with open_store(location) as opened:
        Session.create(opened.create("j1")).user("hello")
    assert (
        main(["export", "--store", location, "--format", "archival", "-o", str(tmp_path / "out.jsonl"), "j1"])
        == 0
    )
    assert (tmp_path / "out.jsonl").exists()


# --- release after the referencing append --------------------------------------------------------------


def test_releasing_a_blob_a_committed_record_references_is_refused_and_collect_keeps_it(
    store: JournalStore,
) -> None:
    ref = store.blobs.put(b"a long tool output", media_type="text/plain")
    Session.create(store.create("s")).user([ref.block()])
    with pytest.raises(BlobReferencedError, match="referenced by record"):
        store.blobs.release(ref)
    assert ref.digest in store.blobs.engine.leased(time.time())
    receipt = store.blobs.collect(grace=0)
    assert ref.digest not in receipt.removed
    assert store.blobs.read(ref) == b"a long tool output"


def test_releasing_a_blob_nothing_references_drops_its_lease_and_collect_removes_it(
    store: JournalStore,
) -> None:
    ref = store.blobs.put(b"never used", media_type="text/plain")
    store.blobs.release(ref)
    assert ref.digest in store.blobs.collect(grace=0).removed


# --- a blob read as a stream is verified -----------------------------------------------------------


def damage(store: JournalStore, kind: str, tmp_path: Path, digest: str, change: str) -> None:
    def altered(data: bytes) -> bytes:
        return data[:-3] if change == "truncate" else data[:5] + bytes([data[5] ^ 1]) + data[6:]

    if kind == "file":
        path = store.blobs.engine.path(digest)
        path.chmod(0o600)
        path.write_bytes(altered(path.read_bytes()))
    else:
        with sqlite3.connect(tmp_path / "S.db") as connection:
            (data,) = connection.execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
            connection.execute("UPDATE blobs SET data = ? WHERE digest = ?", (altered(data), digest))


@pytest.mark.parametrize("kind", ["file", "sqlite"])
@pytest.mark.parametrize("change", ["truncate", "flip"])
def test_a_damaged_blob_streamed_by_open_raises_at_its_end(tmp_path: Path, kind: str, change: str) -> None:
    data = bytes(range(256)) * 8000  # 2 MB: several chunks
    with open_store(url(kind, tmp_path)) as store:
        ref = store.blobs.put(data, media_type="application/octet-stream")
        damage(store, kind, tmp_path, ref.digest, change)
        with store.blobs.open(ref) as stream:
            assert len(stream.read(1000)) == 1000  # a prefix reads: the damage shows once the digest is known
            with pytest.raises(BlobDigestError, match="truncated or altered"):
                stream.read()


def test_a_whole_blob_streams_back_without_error(store: JournalStore) -> None:
    data = b"x" * 3_000_000
    ref = store.blobs.put(data, media_type="application/octet-stream")
    with store.blobs.open(ref) as stream:
        assert stream.read() == data
