"""The directory store's index (store.index): an open that finds the catalog record and the feed.runs
prefix it names still there reads it by key and page and folds only what follows, without opening the
catalog journal; any other index is ignored and rewritten; deleting it changes nothing but speed. (The
contract kit runs on `file:DIR?snapshot_tail=0` too, the index on: conftest.STORES.)"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from waybook import Session
from waybook.model import IntegrityError
from waybook.stores import InvalidStoreUrlError, StoreArgumentError, open_store
from waybook.stores._catalog import Catalog
from waybook.stores._directory import INDEX_FILE, DirectoryStore
from waybook.stores._lazy_catalog import LazyCatalog
from waybook.stores._runs import Runs

ROOT = Path(__file__).resolve().parents[2]


class Folded:
    """How many catalog records and feed runs the stores of this test folded in (not time)."""

    def __init__(self) -> None:
        self.records = 0
        self.runs = 0


@pytest.fixture
def folded(monkeypatch: pytest.MonkeyPatch) -> Folded:
    counts = Folded()
    apply_one, extend = Catalog._apply_one, Runs.extend

    def counting_apply(catalog: Catalog, record: Any) -> None:
        counts.records += 1
        apply_one(catalog, record)

    def counting_extend(runs: Runs, taken: Any) -> None:
        taken = list(taken)
        counts.runs += len(taken)
        extend(runs, taken)

    monkeypatch.setattr(Catalog, "_apply_one", counting_apply)
    monkeypatch.setattr(Runs, "extend", counting_extend)
    return counts


def build(directory: Path, journals: int = 12) -> None:
    """A store with plain, hidden and purged journals, its index written by its close."""
    with DirectoryStore(directory, snapshot_tail=0) as store:
        for n in range(journals):
            session = Session(store.create(f"s{n}", metadata={"n": n, "team": ["a", "b"][n % 2]}))
            session.user(f"question {n}")
            session.assistant(f"answer {n}")
            session.journal.close()
        store.hide("s3", reason="test")
        store.purge("s5", reason="test", actor="auditor")


def seen(store: DirectoryStore) -> tuple[object, ...]:
    """Everything a caller can read of the store's catalog and feed."""
    pages = []
    for hidden in (False, True):
        cursor: str | None = None
        while True:
            page = store.list(hidden=hidden, after=cursor, limit=5)
            pages += [(j.journal_id, j.role, j.metadata, j.created, j.created_at, j.hidden) for j in page]
            cursor = page.cursor
            if cursor is None:
                break
    feed = [(e.position, e.journal_id, e.seq, e.line) for e in store.feed(0)]
    return (
        store.count(),
        store.count(hidden=True),
        [store.cursor_at(i) for i in range(14)],
        pages,
        feed,
        store.purge("s5", reason="again"),  # (purged already: the same receipt, nothing written)
        [store.committed(f"s{n}") for n in range(12)],
    )


def truth(directory: Path) -> tuple[object, ...]:
    """What the store shows when its index is not there (a copy without it, folded in full)."""
    copy = directory.with_name(directory.name + "-unindexed")
    shutil.copytree(directory, copy)
    (copy / INDEX_FILE).unlink(missing_ok=True)
    with DirectoryStore(copy, snapshot_tail=10**9) as store:
        found = seen(store)
    shutil.rmtree(copy)
    return _without_store_url(found)


def _without_store_url(found: tuple[object, ...]) -> tuple[object, ...]:
    receipt = found[5]
    assert receipt is not None
    return (*found[:5], (receipt.journal_id, receipt.digest), *found[6:])  # type: ignore[attr-defined]


def catalog_opened(store: DirectoryStore) -> bool:
    """Whether the store opened its catalog journal (rather than answering from its index)."""
    catalog = store._catalog_raw
    return not isinstance(catalog, LazyCatalog) or catalog.opened


def test_an_open_from_a_current_index_folds_nothing_and_shows_what_a_full_fold_shows(
    tmp_path: Path, folded: Folded
) -> None:
    build(tmp_path / "store")
    expected = truth(tmp_path / "store")
    folded.records = folded.runs = 0
    with DirectoryStore(tmp_path / "store") as store:
        assert (folded.records, folded.runs) == (0, 0)
        assert store.count() == expected[0]
        assert [j.journal_id for j in store.list(limit=3)] == ["s0", "s1", "s2"]
        assert store.open_to_read("s7").head().seq == 3
        assert not catalog_opened(store)  # listing and opening a journal need no catalog journal
        assert _without_store_url(seen(store)) == expected


def test_an_open_folds_only_the_records_and_runs_written_after_its_index(
    tmp_path: Path, folded: Folded
) -> None:
    build(tmp_path / "store")
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:  # (writes no index)
        Session(store.create("late")).user("hello")
    folded.records = folded.runs = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        # the catalog's creation record; the runs: the catalog's, the header's, the message's
        assert (folded.records, folded.runs) == (1, 3)
        assert store.list(limit=100).journals[-1].journal_id == "late"
        assert [e.journal_id for e in store.feed(0)][-1] == "late"


def test_without_its_index_an_open_folds_the_whole_catalog(tmp_path: Path, folded: Folded) -> None:
    build(tmp_path / "store")
    (tmp_path / "store" / INDEX_FILE).unlink()
    folded.records = folded.runs = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9):
        # the header, 12 creations, a hiding and a purge receipt
        assert folded.records == 15


def test_writing_a_whole_index_sweeps_a_dead_writers_temp_file_and_the_old_snapshot(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    build(directory)
    (directory / INDEX_FILE).unlink()
    dead = directory / f".{INDEX_FILE}.999999999.1.tmp"  # no process has that id
    live = directory / f".{INDEX_FILE}.{os.getpid()}.1.tmp"  # a writer of this process may be busy
    for leftover in (dead, live, directory / "store.snapshot"):
        leftover.write_bytes(b"half an index")
    with DirectoryStore(directory, snapshot_tail=0):
        pass
    assert (directory / INDEX_FILE).exists()
    assert not dead.exists()
    assert not (directory / "store.snapshot").exists()
    assert live.exists()


def test_an_index_in_a_directory_whose_name_looks_like_a_uri_query_is_its_own(
    tmp_path: Path, folded: Folded
) -> None:
    directory = tmp_path / "odd?mode=ro#%41"
    build(directory)
    folded.records = folded.runs = 0
    with DirectoryStore(directory, snapshot_tail=10**9) as store:
        assert folded.records == 0  # the index was read, not some other file the name points at
        assert len(store.list(limit=100).journals) > 0


def test_reading_the_feed_after_its_indexed_head_never_reads_the_indexed_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `search --index` does on each run: read the feed after the position it indexed to. That must
    cost what was fed since, not the whole `feed.runs` (0.44 s at 100,000 journals before)."""
    build(tmp_path / "store")
    loads: list[int] = []
    take = Runs._take_prefix

    def counting(runs: Runs) -> None:
        loads.append(int(runs._load is not None))
        take(runs)

    monkeypatch.setattr(Runs, "_take_prefix", counting)
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        head = store.feed_head()
        assert list(store.feed(after=head)) == []
        Session.create(store.create("late"), journal_id="late").user("new")
        fed = [(e.journal_id, e.seq) for e in store.feed(after=head)]
        assert [entry for entry in fed if entry[0] == "late"] == [("late", 1), ("late", 2)]
        assert sum(loads) == 0
        assert [e.journal_id for e in store.feed()][-2:] == ["late", "late"]
        assert sum(loads) == 1  # the whole feed still reads the indexed runs


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _sql(statement: str) -> Any:
    def damage(path: Path) -> None:
        with contextlib.closing(sqlite3.connect(path)) as db, db:
            db.execute(statement)

    return damage


_forged_head = _sql("UPDATE state SET catalog_digest = '" + "0" * 64 + "'")
_forged_end = _sql("UPDATE state SET catalog_end = catalog_end - 1")
_forged_seq = _sql("UPDATE state SET catalog_seq = catalog_seq - 1")
_forged_feed = _sql("UPDATE state SET feed_last_sha256 = '" + "0" * 64 + "'")
_feed_beyond = _sql("UPDATE state SET feed_size = feed_size + 1")
_other_format = _sql("UPDATE state SET format = 0")
_no_state = _sql("DELETE FROM state")
_no_table = _sql("DROP TABLE journals")


def _emptied(path: Path) -> None:
    path.write_bytes(b"")


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00not an index\xff" * 100)


@pytest.mark.parametrize(
    "damage",
    [
        _truncated,
        _forged_head,
        _forged_end,
        _forged_seq,
        _forged_feed,
        _feed_beyond,
        _other_format,
        _no_state,
        _no_table,
        _emptied,
        _garbage,
    ],
)
def test_a_stale_forged_or_truncated_index_is_ignored_and_rewritten(
    tmp_path: Path, folded: Folded, damage: Any
) -> None:
    build(tmp_path / "store")
    expected = truth(tmp_path / "store")
    damage(tmp_path / "store" / INDEX_FILE)
    folded.records = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        assert folded.records == 15  # folded in full
        assert _without_store_url(seen(store)) == expected
    folded.records = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        assert folded.records == 0  # the open that ignored it wrote a sound one
        assert _without_store_url(seen(store)) == expected


def test_an_index_ahead_of_its_catalog_restored_from_a_backup_is_ignored(
    tmp_path: Path, folded: Folded
) -> None:
    build(tmp_path / "store", journals=6)
    backup = tmp_path / "backup"
    shutil.copytree(tmp_path / "store", backup)
    build(tmp_path / "store", journals=0)  # (opens it again: more catalog records, a newer index)
    with DirectoryStore(tmp_path / "store", snapshot_tail=0) as store:
        store.create("after-the-backup").close()
    for name in ("catalog.jsonl", "catalog.jsonl.checkpoint", "feed.runs"):
        shutil.copy(backup / name, tmp_path / "store" / name)
    (tmp_path / "store" / "journals" / "after-the-backup.jsonl").unlink()
    expected = truth(backup)
    folded.records = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        assert folded.records > 0
        assert "after-the-backup" not in [j.journal_id for j in store.list(hidden=True)]
        assert _without_store_url(seen(store))[:5] == expected[:5]


def test_another_stores_index_is_ignored(tmp_path: Path, folded: Folded) -> None:
    build(tmp_path / "store")
    build(tmp_path / "other")  # the same journals, created at other moments under other record ids
    expected = truth(tmp_path / "store")
    shutil.copy(tmp_path / "other" / INDEX_FILE, tmp_path / "store" / INDEX_FILE)
    folded.records = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        assert folded.records == 15
        assert _without_store_url(seen(store)) == expected


def test_an_index_whose_feed_runs_ends_otherwise_is_ignored(tmp_path: Path, folded: Folded) -> None:
    build(tmp_path / "store")
    feed = tmp_path / "store" / "feed.runs"
    lines = feed.read_bytes().splitlines(keepends=True)
    lines[-1], lines[-2] = lines[-2], lines[-1]  # same bytes, same size, another last line
    feed.write_bytes(b"".join(lines))
    folded.runs = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9):
        assert folded.runs == len(lines)  # every run read from feed.runs, none taken from the index


def test_a_feed_runs_shorter_than_its_index_says_is_ignored(tmp_path: Path, folded: Folded) -> None:
    build(tmp_path / "store")
    feed = tmp_path / "store" / "feed.runs"
    lines = feed.read_bytes().splitlines(keepends=True)
    feed.write_bytes(b"".join(lines[:-1]))
    folded.runs = 0
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9):
        assert folded.runs == len(lines) - 1


def test_a_feed_prefix_rewritten_while_the_store_is_open_is_refused_when_the_feed_is_read(
    tmp_path: Path,
) -> None:
    build(tmp_path / "store")
    with DirectoryStore(tmp_path / "store", snapshot_tail=10**9) as store:
        feed = tmp_path / "store" / "feed.runs"
        data = bytearray(feed.read_bytes())
        data[-3:-2] = b"0" if data[-3:-2] != b"0" else b"1"  # (its runs are read on the first feed read)
        feed.write_bytes(bytes(data))
        with pytest.raises(IntegrityError, match=r"feed\.runs: its first [0-9]+ bytes changed.*reopen"):
            list(store.feed(0))


def test_an_index_that_cannot_be_read_or_written_costs_only_speed(tmp_path: Path) -> None:
    build(tmp_path / "store")
    expected = truth(tmp_path / "store")
    path = tmp_path / "store" / INDEX_FILE
    path.unlink()
    path.mkdir()  # a directory where the index goes: it reads as nothing and takes no new one
    with DirectoryStore(tmp_path / "store", snapshot_tail=0) as store:
        Session(store.create("more")).user("hello")
        assert _without_store_url(seen(store))[:2] == (expected[0] + 1, expected[1] + 1)  # type: ignore[operator]
    assert path.is_dir()


def test_a_small_store_keeps_no_index_by_default(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path}/store") as store:
        Session(store.create("one")).user("hello")
    assert not (tmp_path / "store" / INDEX_FILE).exists()


@pytest.mark.parametrize("tail", ["-1", "x", "1.5", "99999999999999999999"])
def test_a_bad_snapshot_tail_in_a_store_url_is_refused(tmp_path: Path, tail: str) -> None:
    with pytest.raises(InvalidStoreUrlError, match=r"snapshot_tail=.*whole number"):
        open_store(f"file:{tmp_path}/store?snapshot_tail={tail}")
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("tail", [-1, 1.5, "10", True])
def test_a_bad_snapshot_tail_is_refused_before_the_store_is_touched(tmp_path: Path, tail: object) -> None:
    with pytest.raises(StoreArgumentError, match=r"snapshot_tail .* whole number"):
        DirectoryStore(tmp_path / "store", snapshot_tail=tail)  # type: ignore[arg-type]
    assert not (tmp_path / "store").exists()


def test_a_store_whose_index_writer_was_killed_at_any_point_opens_as_a_full_fold_shows_it(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "store"
    build(directory, journals=60)
    for round_ in range(3):
        saver = subprocess.Popen(
            [sys.executable, "-m", "tests.stores.index_saver", str(directory), f"r{round_}-"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert saver.stdout is not None
        for _ in range(round_ + 2):  # killed somewhere in a later open, create, close or write
            assert saver.stdout.readline().startswith("saved")
        saver.kill()
        saver.wait()
        saver.stdout.close()
        expected = truth(directory)
        with DirectoryStore(directory, snapshot_tail=10**9) as store:
            assert _without_store_url(seen(store)) == expected


class Reads:
    """What a command read of a store: SQLite VM steps on its index (one per 10 instructions), records
    and runs folded, and whether its catalog journal was opened."""

    def __init__(self) -> None:
        self.steps = 0
        self.catalog_opened = False


def _many(directory: Path, journals: int) -> None:
    with DirectoryStore(directory, durability="none", snapshot_tail=0) as store:
        for n in range(journals):
            Session(store.create(f"j{n:05d}", metadata={"n": n})).user(f"question {n}")


def _reads_of_an_ls_page(
    directory: Path, monkeypatch: pytest.MonkeyPatch, folded: Folded, capsys: pytest.CaptureFixture[str]
) -> Reads:
    from waybook.cli import main
    from waybook.stores._store_index import StoreIndex

    reads = Reads()
    opened = StoreIndex.__init__

    def counting(index: StoreIndex, *args: Any) -> None:
        opened(index, *args)

        def step() -> int:
            reads.steps += 1
            return 0

        index._db.set_progress_handler(step, 10)

    close = DirectoryStore.close

    def noting_close(store: DirectoryStore) -> None:
        reads.catalog_opened = catalog_opened(store)
        close(store)

    folded.records = folded.runs = 0
    with monkeypatch.context() as patch:
        patch.setattr(StoreIndex, "__init__", counting)
        patch.setattr(DirectoryStore, "close", noting_close)
        assert main(["ls", "--store", f"file:{directory}", "--limit", "20", "--json"]) == 0
    assert (folded.records, folded.runs) == (0, 0)
    assert len(json.loads(capsys.readouterr().out)["journals"]) == 20
    return reads


def test_an_ls_page_reads_the_same_of_a_store_ten_times_bigger_and_never_opens_the_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folded: Folded, capsys: pytest.CaptureFixture[str]
) -> None:
    _many(tmp_path / "small", 50)
    _many(tmp_path / "big", 500)
    small = _reads_of_an_ls_page(tmp_path / "small", monkeypatch, folded, capsys)
    big = _reads_of_an_ls_page(tmp_path / "big", monkeypatch, folded, capsys)
    assert (small.catalog_opened, big.catalog_opened) == (False, False)
    assert 0 < big.steps <= 1.5 * small.steps  # (not O(journals): ten times the journals)
