"""Ranked full-text search over a store's journals: an SQLite FTS5 index kept beside the store.

The index is derived data: a fold of the store's feed, rebuilt from nothing at any time (`rebuild`) and
brought up to date incrementally (`update` reads the feed after the position it last indexed, and stores
the documents and the new position in one transaction, so an interrupted update repeats nothing and
loses nothing). A journal purged from the store is purged from the index when the catalog's purge record
comes through the feed; a hidden journal is left out of results unless asked for. Ranking is FTS5's
BM25 (`score` is its negation: higher is better).

Memory search matches current notes only unless asked for history: the `notes` table names, per memory
journal and path, the document of the note's current text (a write replaces it, a delete drops it, a
rename moves it to a document at the new path); superseded and deleted texts stay in the index and are
searched with `history=True`.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from waybook._files import create_private
from waybook.model import (
    CustomEntry,
    Erasure,
    Header,
    JournalError,
    MemoryDelete,
    MemoryRename,
    MemoryWrite,
    erased_placeholder,
    placeholder_record,
)
from waybook.search._documents import document_of
from waybook.stores import CATALOG_ID, HIDDEN, PURGED, JournalStore, local_path

SCHEMA: Final = "waybook.search/2"
"""/2 added the `notes` table (which memory documents are current); an index of /1 is rebuilt."""
OLDER_SCHEMAS: Final = ("waybook.search/1",)
BATCH: Final = 1_000
_WORD: Final = re.compile(r"\w+", re.UNICODE)
_TIME: Final = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?Z?)?")


class SearchError(JournalError):
    """A search problem the caller can fix: a bad query or filter, or an index of another store."""


@attrs.frozen
class Hit:
    journal: str
    seq: int
    id: str
    score: float
    snippet: str
    role: str
    kind: str
    at: str
    journal_role: str

    def as_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def default_index_path(store_url: str) -> Path | None:
    """Beside the store: `DIR.search.sqlite` for `file:DIR`, `FILE.search.sqlite` for `sqlite:FILE`."""
    location = local_path(store_url)
    if location is None or not location.name:
        return None
    return location.with_name(location.name + ".search.sqlite")


class SearchIndex:
    """One index file for one store (its URL is recorded; another store's index is refused)."""

    def __init__(self, path: str | Path, store_url: str) -> None:
        self.path = str(path)
        self.store_url = store_url
        self._erased_since_checkpoint = False
        try:
            create_private(self.path)  # the index holds session text: 0600, like the journals
        except OSError as exc:
            why = exc.strerror or exc
            msg = f"{self.path}: cannot create the search index ({why}); give --index a new file"
            raise SearchError(msg) from None
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None)
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables and "docs" not in tables:
                self._db.close()
                msg = f"{self.path}: is a database but not a search index; give --index a file of its own"
                raise SearchError(msg)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA secure_delete=ON")  # an erased text's freed bytes are zeroed
            self._create()
        except sqlite3.Error as exc:
            msg = f"{self.path}: cannot use as a search index ({exc}); give --index a new file"
            raise SearchError(msg) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- building -----------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """The last feed position indexed."""
        return int(self._meta("position") or 0)

    def update(self, store: JournalStore, *, progress: Callable[[int], None] | None = None) -> int:
        """Index the feed entries after `position`; returns how many records were read. `progress` is
        told the running count after each batch (a command's progress bar)."""
        read = 0
        while True:
            entries = list(store.feed(after=self.position, limit=BATCH))
            if not entries:
                return read
            with self._transaction():
                for entry in entries:
                    self._index(entry.journal_id, entry.seq, entry.record)
                self._set_meta("position", str(entries[-1].position))
            if self._erased_since_checkpoint:  # the log's frames still hold the erased text's pages
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._erased_since_checkpoint = False
            read += len(entries)
            if progress is not None:
                progress(read)

    def rebuild(self, store: JournalStore, *, progress: Callable[[int], None] | None = None) -> int:
        """Drop every document and index the whole feed again."""
        with self._transaction():
            self._clear()
        return self.update(store, progress=progress)

    # --- searching ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        journal: str | None = None,
        role: str | None = None,
        kind: str | None = None,
        journal_role: str | None = None,
        since: str | None = None,
        until: str | None = None,
        hidden: bool = False,
        history: bool = False,
        limit: int = 20,
    ) -> list[Hit]:
        """The best `limit` matches of every word of `query` (any order), best first. Journals the store
        hid are left out unless `hidden` (as `store.list` does); memory matches only notes as they are
        now unless `history` (then every text a note ever had, deleted notes included)."""
        words = _WORD.findall(query)
        if not words:
            msg = f"the query {query!r} has no words to search for"
            raise SearchError(msg)
        if limit < 1:
            msg = f"limit must be at least 1, not {limit}"
            raise SearchError(msg)
        for name, value in (("since", since), ("until", until)):
            if value is not None and not _TIME.fullmatch(value):
                msg = f"{name} {value!r} is not a UTC time like 2026-12-01 or 2026-12-01T09:30:00Z"
                raise SearchError(msg)
        match = " ".join('"' + w.replace('"', '""') + '"' for w in words)
        where, params = ["docs MATCH ?"], [match]
        for column, value in (("journal", journal), ("role", role), ("kind", kind)):
            if value is not None:
                where.append(f"docs.{column} = ?")
                params.append(value)
        if not hidden:
            where.append("COALESCE(journals.hidden, 0) = 0")
        if not history:
            where.append("(docs.role <> 'memory' OR docs.rowid IN (SELECT doc FROM notes))")
        if journal_role is not None:
            where.append("journals.role = ?")
            params.append(journal_role)
        if since is not None:
            where.append("docs.at >= ?")
            params.append(since)
        if until is not None:
            where.append("docs.at < ?")
            params.append(until)
        sql = (
            "SELECT docs.journal, docs.seq, docs.id, bm25(docs), snippet(docs, 0, '[', ']', '…', 12), "
            "docs.role, docs.kind, docs.at, COALESCE(journals.role, '') FROM docs "
            "LEFT JOIN journals ON journals.journal = docs.journal "
            f"WHERE {' AND '.join(where)} ORDER BY bm25(docs), docs.journal, docs.seq LIMIT ?"
        )
        rows = self._db.execute(sql, [*params, limit]).fetchall()
        return [
            Hit(j, int(seq), rid, round(-float(rank), 6), snip, r, k, at, jr)
            for j, seq, rid, rank, snip, r, k, at, jr in rows
        ]

    # --- internals ----------------------------------------------------------------------------

    def _create(self) -> None:
        with self._transaction():
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS journals "
                "(journal TEXT PRIMARY KEY, role TEXT, hidden INTEGER DEFAULT 0)"
            )
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(text, journal UNINDEXED, "
                "seq UNINDEXED, id UNINDEXED, role UNINDEXED, kind UNINDEXED, at UNINDEXED, "
                "tokenize='unicode61 remove_diacritics 2')"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS notes (journal TEXT NOT NULL, path TEXT NOT NULL, "
                "doc INTEGER NOT NULL, PRIMARY KEY (journal, path))"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS notes_doc ON notes (doc)")
            schema, store = self._meta("schema"), self._meta("store")
            if schema is None:
                self._set_meta("schema", SCHEMA)
                self._set_meta("store", self.store_url)
            elif schema in OLDER_SCHEMAS and store == self.store_url:
                self._clear()  # derived data: the next update indexes the whole feed again
                self._set_meta("schema", SCHEMA)
            elif schema != SCHEMA or store != self.store_url:
                msg = (
                    f"{self.path} is a search index of {store!r} ({schema}), not of {self.store_url!r}; "
                    "give another --index path, or delete the file to rebuild it"
                )
                raise SearchError(msg)

    def _index(self, journal: str, seq: int, record: Any) -> None:
        body = record.body
        if journal == CATALOG_ID:
            if not isinstance(body, CustomEntry) or not isinstance(body.data, dict):
                return
            named = str(body.data.get("journal", ""))
            if body.type == PURGED:
                self._db.execute("DELETE FROM docs WHERE journal = ?", (named,))
                self._db.execute("DELETE FROM journals WHERE journal = ?", (named,))
                self._db.execute("DELETE FROM notes WHERE journal = ?", (named,))
            elif body.type == HIDDEN:
                self._db.execute("INSERT OR IGNORE INTO journals (journal) VALUES (?)", (named,))
                self._db.execute("UPDATE journals SET hidden = 1 WHERE journal = ?", (named,))
            return
        if isinstance(body, Header):
            self._db.execute(
                "INSERT INTO journals (journal, role) VALUES (?, ?) "
                "ON CONFLICT (journal) DO UPDATE SET role = excluded.role",
                (journal, body.role),
            )
            return
        if isinstance(body, MemoryDelete):
            self._db.executemany(
                "DELETE FROM notes WHERE journal = ? AND path = ?", [(journal, path) for path in body.paths]
            )
            return
        if isinstance(body, MemoryRename):
            self._move_notes(journal, seq, record, body)
            return
        if isinstance(body, Erasure):
            self._erased(journal, body, seq)
            return
        if record.erased is not None:  # indexed after its erasure: the placeholder, its reason to come
            record = placeholder_record(record, {})
            body = record.body
        document = document_of(body)
        if document is not None:
            cursor = self._db.execute(
                "INSERT INTO docs (text, journal, seq, id, role, kind, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (document.text, journal, seq, record.id, document.role, body.KIND, record.at),
            )
            if isinstance(body, MemoryWrite):
                self._current(journal, body.path, cursor.lastrowid)

    def _erased(self, journal: str, body: Erasure, seq: int) -> None:
        """The documents of the records erasure `seq` took become its placeholder: an erased record never
        matches its old text (it may match "erased" or the reason). FTS5 keeps a deleted row's tokens
        in its segments until they merge, so the index merges them (`optimize`) at once."""
        shown = erased_placeholder(seq, body.reason)
        taken = {entry.seq for entry in body.records}
        rows = self._db.execute("SELECT rowid, seq FROM docs WHERE journal = ?", (journal,)).fetchall()
        changed = [(shown, rowid) for rowid, at in rows if int(at) in taken]
        if changed:
            self._db.executemany("UPDATE docs SET text = ? WHERE rowid = ?", changed)
            self._db.execute("INSERT INTO docs (docs) VALUES ('optimize')")
            self._erased_since_checkpoint = True

    def _current(self, journal: str, path: str, doc: int | None) -> None:
        """`doc` holds the current text of the note at `path`."""
        self._db.execute(
            "INSERT OR REPLACE INTO notes (journal, path, doc) VALUES (?, ?, ?)", (journal, path, doc)
        )

    def _move_notes(self, journal: str, seq: int, record: Any, body: MemoryRename) -> None:
        """Each moved note's current text, at its new path: a document of the rename record."""
        moved: list[tuple[str, str]] = []
        for old, new in body.moves:
            row = self._db.execute(
                "SELECT docs.text FROM notes JOIN docs ON docs.rowid = notes.doc "
                "WHERE notes.journal = ? AND notes.path = ?",
                (journal, old),
            ).fetchone()
            self._db.execute("DELETE FROM notes WHERE journal = ? AND path = ?", (journal, old))
            if row is not None:
                moved.append((new, str(row[0]).partition("\n")[2]))
        for new, text in moved:
            cursor = self._db.execute(
                "INSERT INTO docs (text, journal, seq, id, role, kind, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (f"{new}\n{text}", journal, seq, record.id, "memory", body.KIND, record.at),
            )
            self._current(journal, new, cursor.lastrowid)

    def _clear(self) -> None:
        self._db.execute("DELETE FROM docs")
        self._db.execute("DELETE FROM journals")
        self._db.execute("DELETE FROM notes")
        self._set_meta("position", "0")

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
