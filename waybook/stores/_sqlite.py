"""`SqliteStore` (`sqlite:FILE`): many journals in one SQLite database file.

WAL mode; every write is one `BEGIN IMMEDIATE` transaction (so the head compare and the insert happen
under the database's write lock), taken in turn: writers queue on a lock file beside the database first
(`_writer_queue`: SQLite's own lock is not a queue). `synchronous=FULL` for the fsync policy (NORMAL
for "flush", OFF for "none"); `secure_delete` so a purge overwrites what it deletes. Safe across
threads (a connection per thread) and processes (SQLite's locks). A writer that cannot get its turn or
the lock within `busy_timeout` seconds (each) gets StoreBusyError: "database is locked" never reaches the
caller raw.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import msgspec

from waybook._files import create_private
from waybook.journal import Durability, check_seconds
from waybook.model import GENESIS, GENESIS_DIGEST, Head, JournalClosedError, StorageError
from waybook.stores._base import store_clock, store_ids
from waybook.stores._blob_tables import SqliteBlobs
from waybook.stores._database import DatabaseStore
from waybook.stores._engine import FeedRow, JournalRow
from waybook.stores._errors import StoreArgumentError, StoreBusyError
from waybook.stores._writer_queue import WritersQueue

SCHEMA_VERSION: Final = 2
BUSY_TIMEOUT: Final = 30.0
"""Seconds a writer waits for the database lock before StoreBusyError."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS journals (
    journal_id TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    hidden INTEGER NOT NULL DEFAULT 0,
    purged INTEGER
);
CREATE INDEX IF NOT EXISTS journals_by_creation ON journals (created);
CREATE TABLE IF NOT EXISTS records (
    position INTEGER PRIMARY KEY,
    journal_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    digest TEXT NOT NULL,
    line BLOB NOT NULL,
    UNIQUE (journal_id, seq)
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters (name, value) VALUES ('purged_through', 0);
"""

_OWN_TABLES: Final = frozenset({"journals", "records", "counters", "blobs", "blob_leases"})
"""The tables a store of any schema version may hold (a file with others is another program's)."""

_HEADS: Final = f"""
ALTER TABLE journals ADD COLUMN head_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE journals ADD COLUMN head_digest TEXT NOT NULL DEFAULT '{GENESIS_DIGEST}';
UPDATE journals SET
    head_seq = coalesce((SELECT max(r.seq) FROM records AS r WHERE r.journal_id = journals.journal_id), 0),
    head_digest = coalesce((SELECT r.digest FROM records AS r WHERE r.journal_id = journals.journal_id
                            ORDER BY r.seq DESC LIMIT 1), '{GENESIS_DIGEST}');
"""
"""Version 2: each journal's committed head in its row, moved by every insert (what the store knows it
holds); a version 1 file takes its heads from its records once."""

_SYNCHRONOUS: Final = {
    Durability.NONE: "OFF",
    Durability.FLUSH: "NORMAL",
    Durability.FSYNC: "FULL",
    Durability.GROUP: "FULL",
}


class SqliteTransaction:
    """The statements of database.Transaction, in SQLite."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._after: list[Callable[[], None]] = []

    def journal(self, journal_id: str, *, lock: bool = False) -> JournalRow | None:
        row = self._conn.execute(
            "SELECT journal_id, role, metadata, created, created_at, hidden, purged FROM journals "
            "WHERE journal_id = ?",
            (journal_id,),
        ).fetchone()
        return None if row is None else _journal_row(row)

    def head(self, journal_id: str) -> Head:
        row = self._conn.execute(
            "SELECT head_seq, head_digest FROM journals WHERE journal_id = ?", (journal_id,)
        ).fetchone()
        return GENESIS if row is None else Head(row[0], row[1])

    def lines(self, journal_id: str, after: int, limit: int) -> builtins.list[bytes]:
        rows = self._conn.execute(
            "SELECT line FROM records WHERE journal_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (journal_id, after, limit),
        ).fetchall()
        return [_bytes(row[0]) for row in rows]

    def page_rows(self, journal_ids: Sequence[str]) -> builtins.list[tuple[JournalRow, Head]]:
        rows = self._conn.execute(
            "SELECT journal_id, role, metadata, created, created_at, hidden, purged, head_seq, head_digest "
            "FROM journals WHERE journal_id IN (SELECT value FROM json_each(?))",
            (msgspec.json.encode(list(journal_ids)).decode(),),
        ).fetchall()
        return [(_journal_row(row[:7]), Head(row[7], row[8])) for row in rows]

    def page_lines(self, heads: Mapping[str, Head]) -> dict[str, builtins.list[bytes]]:
        """(One read transaction is one snapshot here: every line the journals hold, as `lines` reads.)"""
        found: dict[str, builtins.list[bytes]] = {journal_id: [] for journal_id in heads}
        rows = self._conn.execute(
            "SELECT journal_id, line FROM records WHERE journal_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY journal_id, seq",
            (msgspec.json.encode(list(heads)).decode(),),
        )
        for journal_id, line in rows:
            found[journal_id].append(_bytes(line))
        return found

    def allocate(self, count: int) -> int:
        """The next position after every record ever committed. Write transactions are serialised, so
        the highest row id is the last position handed out, unless a purge deleted it: a purge first
        records the highest position in `purged_through` (so an ordinary append writes no counter)."""
        return self.feed_head() + 1

    def insert(self, journal_id: str, rows: Sequence[tuple[int, int, str, bytes]]) -> None:
        self._conn.executemany(
            "INSERT INTO records (seq, position, digest, line, journal_id) VALUES (?, ?, ?, ?, ?)",
            [(*row, journal_id) for row in rows],
        )
        seq, _, digest, _ = rows[-1]
        self._conn.execute(
            "UPDATE journals SET head_seq = ?, head_digest = ? WHERE journal_id = ?",
            (seq, digest, journal_id),
        )

    def add_journal(self, row: JournalRow) -> None:
        self._conn.execute(
            "INSERT INTO journals (journal_id, role, metadata, created, created_at, hidden, purged) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row.journal_id,
                row.role,
                msgspec.json.encode(row.metadata, order="sorted").decode(),
                row.created,
                row.created_at,
                int(row.hidden),
                row.purged,
            ),
        )

    def set_hidden(self, journal_id: str) -> None:
        self._conn.execute("UPDATE journals SET hidden = 1 WHERE journal_id = ?", (journal_id,))

    def set_purged(self, journal_id: str, receipt_seq: int) -> None:
        self._conn.execute(
            "UPDATE counters SET value = (SELECT coalesce(max(position), 0) FROM records) "
            "WHERE name = 'purged_through'"
        )
        self._conn.execute("UPDATE journals SET purged = ? WHERE journal_id = ?", (receipt_seq, journal_id))
        self._conn.execute("DELETE FROM records WHERE journal_id = ?", (journal_id,))

    def journals(
        self, *, role: str | None, hidden: bool, after: int, limit: int
    ) -> builtins.list[JournalRow]:
        rows = self._conn.execute(
            "SELECT journal_id, role, metadata, created, created_at, hidden, purged FROM journals "
            "WHERE created > ? AND purged IS NULL AND journal_id != '_catalog' "
            "AND (? IS NULL OR role = ?) AND (? OR hidden = 0) ORDER BY created LIMIT ?",
            (after, role, role, int(hidden), limit),
        ).fetchall()
        return [_journal_row(row) for row in rows]

    def count_journals(self, *, hidden: bool) -> int:
        (count,) = self._conn.execute(
            "SELECT count(*) FROM journals WHERE purged IS NULL AND journal_id != '_catalog' "
            "AND (? OR hidden = 0)",
            (int(hidden),),
        ).fetchone()
        return int(count)

    def created_at_index(self, index: int, *, hidden: bool) -> int | None:
        row = self._conn.execute(
            "SELECT created FROM journals WHERE purged IS NULL AND journal_id != '_catalog' "
            "AND (? OR hidden = 0) ORDER BY created LIMIT 1 OFFSET ?",
            (int(hidden), index),
        ).fetchone()
        return None if row is None else int(row[0])

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        rows = self._conn.execute(
            "SELECT position, journal_id, seq, line FROM records WHERE position > ? "
            "ORDER BY position LIMIT ?",
            (after, limit),
        ).fetchall()
        return [FeedRow(position, journal_id, seq, _bytes(line)) for position, journal_id, seq, line in rows]

    def feed_head(self) -> int:
        (value,) = self._conn.execute(
            "SELECT max(coalesce((SELECT max(position) FROM records), 0), "
            "(SELECT value FROM counters WHERE name = 'purged_through'))"
        ).fetchone()
        return int(value)

    def replace_lines(self, journal_id: str, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Rewrite erased records' lines in place (`secure_delete` zeroes the bytes they free)."""
        self._conn.executemany(
            "UPDATE records SET line = ? WHERE journal_id = ? AND seq = ? AND digest = ?",
            [(line, journal_id, seq, digest) for seq, digest, line in rows],
        )

    def note_erasure(self) -> None:
        """Until the WAL is checkpointed and truncated, its old frames still hold the erased pages: the
        flag makes the next open (or `erase --resume`) scrub it if this process cannot."""
        self._conn.execute("INSERT OR REPLACE INTO counters (name, value) VALUES ('scrub_pending', 1)")

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after.append(action)


def _bytes(line: object) -> bytes:
    """A stored line as bytes. Only bytes are ever stored; text there means someone else wrote it, and
    its bytes then go to the chain check like any other alteration."""
    return line if type(line) is bytes else str(line).encode()


def _journal_row(row: tuple[Any, ...]) -> JournalRow:
    journal_id, role, metadata, created, created_at, hidden, purged = row
    return JournalRow(
        journal_id, role, msgspec.json.decode(metadata), created, created_at, bool(hidden), purged
    )


class SqliteEngine:
    """One SQLite database file; a connection per thread, closed together by `close`."""

    poll_interval: Final = 0.25
    """Longest sleep between checks for another process's commits while waiting on the feed."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durability: Durability | str = Durability.FSYNC,
        busy_timeout: float = BUSY_TIMEOUT,
    ) -> None:
        self._path = Path(path)
        self._url = f"sqlite:{self._path}"
        self._durability = Durability(durability)
        self._busy_timeout = check_seconds(busy_timeout, what="busy_timeout", error=StoreArgumentError)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_mutex = threading.Lock()
        self._signal = threading.Condition()
        self._writers = WritersQueue(self._path)
        self._closed = False
        if not self._path.parent.is_dir():
            msg = f"{self._path.parent}: no such directory for the SQLite store"
            raise StorageError(msg)
        try:
            create_private(self._path)  # session text: 0600, and so are SQLite's -wal and -shm
        except OSError as exc:
            msg = f"{self._path}: cannot create the SQLite store's database ({exc.strerror or exc})"
            raise StorageError(msg) from None
        with self._errors("set up the database"):
            conn = self._connection()
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                msg = (
                    f"{self._url}: the database has schema version {version}, newer than this waybook "
                    f"({SCHEMA_VERSION}); upgrade waybook to open it"
                )
                raise StorageError(msg)
            if version < SCHEMA_VERSION:
                self._upgrade(conn)
        if self.scrub_pending():  # an erasure's process died before it scrubbed the WAL (docs/erasure.md)
            self.scrub()

    def _upgrade(self, conn: sqlite3.Connection) -> None:
        """Bring the file to SCHEMA_VERSION in one write transaction, from the version it holds once the
        lock is taken (a racing opener may have upgraded it meanwhile)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            steps = (_SCHEMA if version < 1 else "") + (_HEADS if version < 2 else "")
            for statement in steps.split(";"):  # (executescript would commit first)
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _refuse_foreign(self, conn: sqlite3.Connection) -> None:
        """StorageError if a database with no schema version holds another program's tables, asked on
        the first connection before it changes anything (not even the switch to WAL): a store never
        writes into someone else's database. (Never by reading the file itself: closing another
        descriptor of the file would drop this process's SQLite locks on it.)"""
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version != 0:
            return
        tables = sorted(
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in _OWN_TABLES and not name.startswith("sqlite_")
        )
        if tables:
            shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
            msg = (
                f"{self._url}: this SQLite database is not a waybook store (it holds the tables {shown}); "
                "nothing was written to it. Name a new file for the store"
            )
            raise StorageError(msg)

    @property
    def url(self) -> str:
        return self._url

    @property
    def path(self) -> Path:
        return self._path

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[SqliteTransaction]:
        """One transaction; a write waits its turn in the writers' queue first (`_writer_queue`)."""
        if not write:
            with self._transaction(write=False) as tx:
                yield tx
            return
        with self._writers.turn(self._busy_timeout) as held:
            if not held:
                msg = (
                    f"{self._url}: could not write: the writers before this one held the store for "
                    f"{self._busy_timeout:g}s; nothing was written. Retry, or open the store with a "
                    "longer ?busy_timeout="
                )
                raise StoreBusyError(msg)
            with self._transaction(write=True) as tx:
                yield tx

    @contextlib.contextmanager
    def _transaction(self, *, write: bool) -> Iterator[SqliteTransaction]:
        with self._errors("write" if write else "read"):
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            tx = SqliteTransaction(conn)
            try:
                yield tx
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # also when COMMIT itself failed: never leave one open
                    conn.execute("ROLLBACK")
                raise
        for action in tx._after:
            action()

    def committed(self) -> None:
        with self._signal:
            self._signal.notify_all()

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Wake on this process's commits at once; poll for other processes' with a backoff."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.005
        while True:
            with self._signal:  # checked under the lock `committed` notifies with: no wake-up is lost
                if head() > after:
                    return True
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._signal.wait(pause if left is None else min(pause, left))
            pause = min(pause * 2, self.poll_interval)

    def synchronous(self) -> str:
        with self._errors("read its settings"):
            (level,) = self._connection().execute("PRAGMA synchronous").fetchone()
        return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, str(level))

    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it, so erased pages leave the log too. False when
        another connection's reads kept the checkpoint from completing (the WAL then keeps frames)."""
        with self._errors("checkpoint"):
            rows = self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return not rows or rows[0][0] == 0

    def scrub(self) -> bool:
        """After an erasure (or at open, when one left the flag): checkpoint and truncate the WAL, then
        clear the flag. True when the log no longer holds the erased pages."""
        if not self.checkpoint():
            return False
        with self._errors("scrub"):
            conn = self._connection()
            conn.execute("UPDATE counters SET value = 0 WHERE name = 'scrub_pending' AND value != 0")
        return self.checkpoint()

    def scrub_pending(self) -> bool:
        with self._errors("read"):
            row = (
                self._connection()
                .execute("SELECT value FROM counters WHERE name = 'scrub_pending'")
                .fetchone()
            )
        return row is not None and row[0] != 0

    def close(self) -> None:
        with self._connections_mutex:
            self._closed = True
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            return conn
        with self._connections_mutex:
            if self._closed:
                msg = f"{self._url}: the store is closed; open it again with open_store(url)"
                raise JournalClosedError(msg)
            conn = sqlite3.connect(
                self._path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._connections.append(conn)
        if len(self._connections) == 1:  # the store's first: is the file a store's?
            try:
                self._refuse_foreign(conn)
            except BaseException:
                with self._connections_mutex:
                    self._connections.remove(conn)
                conn.close()
                raise
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {_SYNCHRONOUS[self._durability]}")
        conn.execute("PRAGMA secure_delete = ON")
        self._local.conn = conn
        return conn

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn sqlite3's errors into the store's typed errors."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                msg = (
                    f"{self._url}: could not {doing}: the database stayed locked by other writers for "
                    f"{self._busy_timeout:g}s; nothing was written. Retry, or open the store with a "
                    "longer ?busy_timeout="
                )
                raise StoreBusyError(msg) from exc
            msg = f"{self._url}: could not {doing}: {text}"
            raise StorageError(msg) from exc
        except sqlite3.DatabaseError as exc:
            msg = f"{self._url}: could not {doing}: {exc}; the file may not be a waybook SQLite store"
            raise StorageError(msg) from exc


class SqliteStore(DatabaseStore):
    """Many journals in one SQLite file. See the module docstring and docs/stores.md."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durability: Durability | str = Durability.FSYNC,
        busy_timeout: float = BUSY_TIMEOUT,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
    ) -> None:
        self._sqlite = SqliteEngine(path, durability=durability, busy_timeout=busy_timeout)
        try:
            super().__init__(self._sqlite, clock=clock, ids=ids)
        except BaseException:
            self._sqlite.close()
            raise

    @property
    def path(self) -> Path:
        return self._sqlite.path

    @property
    def synchronous(self) -> str:
        """SQLite's `synchronous` setting as this thread's connection reports it: FULL (the default,
        durability `fsync`: a commit that returns is on disk), NORMAL (`flush`) or OFF (`none`)."""
        return self._sqlite.synchronous()

    def _blob_engine(self) -> SqliteBlobs:
        return SqliteBlobs(self._sqlite.path)

    def _after_purge(self) -> None:
        self._sqlite.checkpoint()
