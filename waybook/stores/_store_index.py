"""The directory store's index (`DIR/store.index`): its catalog fold and what its feed fed, in SQLite, read
by key and by page.

A directory store's listing is the fold of its catalog journal, and what it committed to each journal is
the outcome of `feed.runs`; folding both costs O(journals). The index keeps that outcome as rows (one per
journal: its listing row; one per fed journal: what was fed of it) and names what it was made from: the
catalog's record (seq, digest, and the byte offset its line ends at) and the `feed.runs` prefix (its byte
size, the SHA-256 of its last line, its runs and head). An open reads that state row and checks it against
the files (`check`): the catalog's line that ends at that offset has that digest and seq (the digest
chain commits to every record before it), `feed.runs` is at least that long and its line before that size
is the one named. It then asks the index for what a caller asks about (one journal, one page), nothing
else: an open costs the same at 100 journals and at 100,000.

Rows are never rewritten to say something else at the seq they were made at: a journal's row records the
catalog seq it was created, hidden and forgotten (purged, or replaced by a second creation) at, so a
store that opened the index at catalog seq S reads it as of S (`created <= S`, hidden or gone only if at or
before S) while another process folds newer records into it. What was fed of a journal only grows.

Written whole into a temp file renamed over the index (a store that found none it could use), or
brought forward in place in one SQLite transaction (an open or close that folded past it); SQLite's
rollback journal undoes a writer killed mid-transaction. Like the JSONL checkpoint it is an accelerator,
never a source of truth, and not a signature: a file that is not an index this version wrote, or whose
state does not match the files, is ignored (and replaced); someone who can rewrite the store's files can
write an index that lists other journals, as they can rewrite the catalog itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from waybook._files import FILE_MODE, fsync_dir
from waybook.codecs import decode_record, line_digest
from waybook.model import Head, Record, StorageError
from waybook.stores._values import JournalInfo, PurgeReceipt

FORMAT: Final = 1
"""The index format this version writes and reads (another is ignored)."""
FIRST_ROWS: Final = 32
"""Journals a listing first reads from the index at once (twice as many each time it reads on, to 1024)."""

_SCHEMA = """
CREATE TABLE state (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    format INTEGER NOT NULL,
    catalog_seq INTEGER NOT NULL, catalog_digest TEXT NOT NULL, catalog_end INTEGER NOT NULL,
    feed_size INTEGER NOT NULL, feed_last_sha256 TEXT NOT NULL, feed_head INTEGER NOT NULL,
    feed_runs INTEGER NOT NULL, journals INTEGER NOT NULL, hidden INTEGER NOT NULL
);
CREATE TABLE journals (
    created INTEGER PRIMARY KEY, id TEXT NOT NULL, role TEXT NOT NULL, metadata TEXT NOT NULL,
    created_at TEXT NOT NULL, hidden_at INTEGER, gone_at INTEGER
);
CREATE INDEX journals_by_id ON journals (id, created);
CREATE TABLE purged (
    id TEXT PRIMARY KEY, role TEXT NOT NULL, head_seq INTEGER NOT NULL, head_digest TEXT NOT NULL,
    records INTEGER NOT NULL, reason TEXT NOT NULL, actor TEXT, at TEXT NOT NULL, catalog_seq INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE fed (id TEXT PRIMARY KEY, last INTEGER NOT NULL, digest TEXT) WITHOUT ROWID;
"""


@attrs.frozen
class IndexState:
    """What an index was made from, and its counts as of that catalog seq."""

    catalog_seq: int
    catalog_digest: str
    catalog_end: int
    """The byte offset in the catalog file where the line of record `catalog_seq` ends (its newline)."""
    feed_size: int
    feed_last_sha256: str
    """The SHA-256 of `feed.runs`'s last line before `feed_size` ("" when the prefix is empty)."""
    feed_head: int
    feed_runs: int
    journals: int
    """How many journals a listing with hidden ones shows (as of `catalog_seq`)."""
    hidden: int


@attrs.frozen
class IndexTail:
    """What a store folded past its index: the journals created or changed, those forgotten (purged or
    replaced) with the seq they were forgotten at, the purge receipts, what was fed, and the new state."""

    journals: list[tuple[JournalInfo, int | None]]
    """Each journal created or hidden past the index, with the seq it was hidden at (None: shown)."""
    gone: list[tuple[int, int]]
    """(creation seq, seq it was forgotten at) of each journal forgotten past the index."""
    purged: list[PurgeReceipt]
    fed: list[tuple[str, int, str | None]]
    state: IndexState


class StoreIndex:
    """An open index, read as of its state's catalog seq (`state`). Thread-safe."""

    def __init__(self, connection: sqlite3.Connection, state: IndexState, path: Path) -> None:
        self._db = connection
        self.state = state
        self.path = path
        self._mutex = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> StoreIndex | None:
        """The index at `path`, or None when there is none this version can read (it is left as it is)."""
        if not path.is_file():
            return None
        try:
            uri = f"file:{urllib.parse.quote(str(path))}?mode=rw"  # (a `?` or `#` in a directory's name)
            db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
        except sqlite3.Error:
            return None
        try:
            row = db.execute(
                "SELECT format, catalog_seq, catalog_digest, catalog_end, feed_size, feed_last_sha256, "
                "feed_head, feed_runs, journals, hidden FROM state WHERE one = 1"
            ).fetchone()
            state = _state_of(row)
            (tables,) = db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                "('state', 'journals', 'purged', 'fed')"
            ).fetchone()
            if tables != 4:
                state = None
        except (sqlite3.Error, TypeError, ValueError):
            state = None
        if state is None:
            db.close()
            return None
        return cls(db, state, path)

    def check(self, catalog_fd: int, feed_fd: int) -> tuple[Record, bytes] | None:
        """The catalog's record the index was made up to and its line, when the files still hold what the
        index names (see the module's docstring); else None: the index is stale, forged or another store's."""
        state = self.state
        line = _line_ending_at(catalog_fd, state.catalog_end)
        if line is None or line_digest(line) != state.catalog_digest:
            return None
        try:
            record = decode_record(line, where=str(self.path))
        except ValueError:
            return None
        if record.seq != state.catalog_seq or Head.of(record) != Head(
            state.catalog_seq, state.catalog_digest
        ):
            return None
        if os.fstat(feed_fd).st_size < state.feed_size:
            return None
        if state.feed_size:
            last = _line_ending_at(feed_fd, state.feed_size)
            if last is None or hashlib.sha256(last).hexdigest() != state.feed_last_sha256:
                return None
        elif state.feed_last_sha256:
            return None
        return record, line

    def close(self) -> None:
        with self._mutex:
            self._db.close()

    # --- reads, as of `state.catalog_seq` -------------------------------------------------------------

    def journal(self, journal_id: str) -> JournalInfo | None:
        seq = self.state.catalog_seq
        rows = self._query(
            f"SELECT {_COLUMNS} FROM journals WHERE id = ? AND created <= ? AND {_KEPT} "
            "ORDER BY created DESC LIMIT 1",
            (journal_id, seq, seq),
        )
        return _info(rows[0], seq) if rows else None

    def journals_after(self, after: int) -> Iterator[JournalInfo]:
        """The journals created after catalog seq `after`, in creation order, read a page at a time."""
        seq, rows_wanted = self.state.catalog_seq, FIRST_ROWS
        while True:
            rows = self._query(
                f"SELECT {_COLUMNS} FROM journals WHERE created > ? AND created <= ? AND {_KEPT} "
                "ORDER BY created LIMIT ?",
                (after, seq, seq, rows_wanted),
            )
            for row in rows:
                yield _info(row, seq)
            if len(rows) < rows_wanted:
                return
            after, rows_wanted = rows[-1][0], min(2 * rows_wanted, 1024)

    def created_at_index(self, index: int, *, hidden: bool) -> int | None:
        """The creation seq of the listing's `index`-th journal (from 0), or None past the last."""
        seq = self.state.catalog_seq
        shown = "" if hidden else "AND (hidden_at IS NULL OR hidden_at > ?)"
        args: tuple[int, ...] = (seq, seq) if hidden else (seq, seq, seq)
        rows = self._query(
            f"SELECT created FROM journals WHERE created <= ? AND {_KEPT} {shown} ORDER BY created "
            "LIMIT 1 OFFSET ?",
            (*args, index),
        )
        return int(rows[0][0]) if rows else None

    def purge_receipt(self, journal_id: str, *, store: str) -> PurgeReceipt | None:
        rows = self._query(
            "SELECT id, role, head_seq, head_digest, records, reason, actor, at, catalog_seq FROM purged "
            "WHERE id = ? AND catalog_seq <= ?",
            (journal_id, self.state.catalog_seq),
        )
        if not rows:
            return None
        j, role, head_seq, head_digest, records, reason, actor, at, catalog_seq = rows[0]
        return PurgeReceipt(
            store=store,
            journal_id=j,
            role=role,
            head=Head(head_seq, head_digest),
            records=records,
            reason=reason,
            actor=actor,
            at=at,
            catalog_seq=catalog_seq,
        )

    def fed(self, journal_id: str) -> tuple[int, str | None] | None:
        """What was fed of the journal (its last fed seq and that record's digest), None if nothing.
        (It may be newer than the state: what was fed only grows, and the store folds the same runs.)"""
        rows = self._query("SELECT last, digest FROM fed WHERE id = ?", (journal_id,))
        return (int(rows[0][0]), rows[0][1]) if rows else None

    def _query(self, sql: str, args: tuple[object, ...]) -> list[Any]:
        try:
            with self._mutex:
                return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            msg = (
                f"{self.path}: the store's index cannot be read ({exc}); delete it: the next open folds "
                "the catalog in full and writes a sound one"
            )
            raise StorageError(msg) from exc

    # --- writes ---------------------------------------------------------------------------------------

    def bring_forward(self, tail: IndexTail) -> bool:
        """Fold `tail` into the index in one transaction, unless another store brought it further already
        (then nothing is written). False when SQLite could not write it (it costs only speed)."""
        try:
            with self._mutex:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    (at,) = self._db.execute("SELECT catalog_seq FROM state WHERE one = 1").fetchone()
                    if at <= tail.state.catalog_seq:
                        _write_tail(self._db, tail)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
        except sqlite3.Error:
            return False
        return True


_COLUMNS: Final = "created, id, role, metadata, created_at, hidden_at"
_KEPT: Final = "(gone_at IS NULL OR gone_at > ?)"


def _info(row: tuple[Any, ...], seq: int) -> JournalInfo:
    created, journal_id, role, metadata, created_at, hidden_at = row
    hidden = hidden_at is not None and hidden_at <= seq
    return JournalInfo(journal_id, role, json.loads(metadata), created, created_at, hidden)


def _state_of(row: tuple[Any, ...] | None) -> IndexState | None:
    if row is None or row[0] != FORMAT:
        return None
    numbers = (row[1], row[3], row[4], row[6], row[7], row[8], row[9])
    if not all(type(n) is int and n >= 0 for n in numbers) or row[1] < 1:
        return None
    if type(row[2]) is not str or type(row[5]) is not str:
        return None
    return IndexState(row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9])


def _line_ending_at(fd: int, end: int) -> bytes | None:
    """The line whose newline is the byte before offset `end` of the file (without it), or None."""
    if end < 2:
        return None
    chunk = 4096
    start = end
    data = b""
    while True:
        start = max(0, start - chunk)
        data = os.pread(fd, end - start, start)
        if len(data) != end - start or not data.endswith(b"\n"):
            return None
        cut = data.rfind(b"\n", 0, len(data) - 1)
        if cut >= 0:
            return data[cut + 1 : -1]
        if start == 0:
            return data[:-1]
        chunk *= 4


def _write_tail(db: sqlite3.Connection, tail: IndexTail) -> None:
    for created, gone_at in tail.gone:
        db.execute(
            "UPDATE journals SET gone_at = ? WHERE created = ? AND gone_at IS NULL", (gone_at, created)
        )
    db.executemany(
        "INSERT INTO journals (created, id, role, metadata, created_at, hidden_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (created) DO UPDATE SET hidden_at = coalesce(journals.hidden_at, excluded.hidden_at)",
        (_journal_row(info, hidden_at) for info, hidden_at in tail.journals),  # (a row at a time)
    )
    db.executemany(
        "INSERT OR REPLACE INTO purged VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [_purge_row(receipt) for receipt in tail.purged],
    )
    db.executemany(
        "INSERT INTO fed VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET last = excluded.last, "
        "digest = excluded.digest WHERE excluded.last >= fed.last",
        tail.fed,
    )
    s = tail.state
    db.execute(
        "INSERT OR REPLACE INTO state VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            FORMAT,
            s.catalog_seq,
            s.catalog_digest,
            s.catalog_end,
            s.feed_size,
            s.feed_last_sha256,
            s.feed_head,
            s.feed_runs,
            s.journals,
            s.hidden,
        ),
    )


def _journal_row(info: JournalInfo, hidden_at: int | None) -> tuple[object, ...]:
    metadata = json.dumps(info.metadata, ensure_ascii=False, separators=(",", ":"))
    return (info.created, info.journal_id, info.role, metadata, info.created_at, hidden_at)


def _purge_row(r: PurgeReceipt) -> tuple[object, ...]:
    return (
        r.journal_id,
        r.role,
        r.head.seq,
        r.head.digest,
        r.records,
        r.reason,
        r.actor,
        r.at,
        r.catalog_seq,
    )


def write_index(path: Path, tail: IndexTail) -> bool:
    """Write a whole new index at `path` holding `tail` (everything, from an empty index): built in a temp
    file beside it, synced, renamed over it, the directory synced. False when it could not be written."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, FILE_MODE))
        db = sqlite3.connect(temp)
        try:
            db.executescript(_SCHEMA)
            with db:
                _write_tail(db, tail)
        finally:
            db.close()
        fd = os.open(temp, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
        fsync_dir(path.parent)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            temp.unlink()
        return False
    _sweep_leftovers(path)
    return True


OLD_SNAPSHOT: Final = "store.snapshot"
"""What the index replaced (a store's fold in one msgspec file); nothing reads it any more."""


def _sweep_leftovers(path: Path) -> None:
    """Remove what earlier writers left beside the index: the temp file of a writer killed mid-write
    (its process is gone) and the old snapshot. Best effort: a leftover costs only disk."""
    for temp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = temp.name.removeprefix(f".{path.name}.").split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                temp.unlink()
    with contextlib.suppress(OSError):
        (path.parent / OLD_SNAPSHOT).unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # (or a number no process can have)
        return False
    except PermissionError:
        return True  # another user's process
    return True
