"""`--store URL`: the CLI's one way to name a store, and a journal in it instead of a file.

Every command that takes the option adds it with `add_store_option(parser, ...)`. A command on journals
(`--store URL JOURNAL_ID`) opens its journal with `common.open_journal(args.path, args.store)`: with
`--store`, PATH is a journal id. A journal of a directory store is opened as its JSONL file, read-only;
other stores open it through `store.open`. A command on a whole store (`ls`, `gc`, `search`) requires the
option and opens the store with `connect_store`; only `import` creates one (`create_store`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from waybook.commands.exits import UsageError
from waybook.journal import AppendResult, Head, JsonlJournal, NewRecord, Record, SessionJournal
from waybook.journal._verify import VerifyReport

if TYPE_CHECKING:
    from waybook.stores import JournalStore

URLS = "file:DIR, sqlite:FILE, postgresql://..."
"""The store URLs a command takes, as its help names them."""


def add_store_option(
    parser: argparse.ArgumentParser,
    *,
    ids: str | None = "PATH",
    required: bool = False,
    detail: str = "",
    default: Any = None,
) -> None:
    """`--store URL`, the same for every command.

    With `ids`, those arguments are journal ids in the store (`--store URL JOURNAL_ID`); with None, the
    command works on the whole store, and `required` says it needs one. `detail` adds what the command
    does with the store (`import` creates it); `default` is argparse.SUPPRESS where a sub-command's
    option must not overwrite its parent's (`waybook memory --store URL ID`).
    """
    if ids is None:
        text = f"the store ({URLS})"
    else:
        text = f"the store holding the journal ({URLS}); {ids} is its id"
    parser.add_argument("--store", metavar="URL", required=required, default=default, help=text + detail)


def connect_store(url: str) -> JournalStore:
    """Open an existing store for a command; a missing file: or sqlite: store is a usage error (a
    command never creates one by mistake)."""
    from waybook.stores import StoreArgumentError, open_store
    from waybook.stores._url import local_path

    scheme = url.partition(":")[0]
    location = local_path(url)
    if scheme == "file" and location is not None and not (location / "catalog.jsonl").is_file():
        msg = f"{url}: no directory store there (no catalog.jsonl)"
        raise UsageError(msg)
    if scheme == "sqlite" and location is not None and not location.is_file():
        msg = f"{url}: no SQLite store there"
        raise UsageError(msg)
    try:
        return open_store(url)
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


def create_store(url: str) -> JournalStore:
    """Open the store at `url` for `import`, creating it if it is missing; a bad URL is a usage error."""
    from waybook.stores import StoreArgumentError, open_store

    try:
        return open_store(url)
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


def journal_file_in_store(store: JournalStore, journal_id: str) -> Path | None:
    """The JSONL file of a journal in a directory store (None for other stores)."""
    from waybook.stores import DirectoryStore, StoreArgumentError

    if not isinstance(store, DirectoryStore):
        return None
    if not store.exists(journal_id):
        store.open(journal_id)  # raises the store's typed error (unknown, purged)
    try:
        return store.path_of(journal_id)
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


def open_in_store(url: str, journal_id: str) -> SessionJournal:
    """The journal `journal_id` of the store at `url`, closing the store when it is closed."""
    from waybook.stores import StoreArgumentError

    store = connect_store(url)
    try:
        path = journal_file_in_store(store, journal_id)
        journal: SessionJournal = JsonlJournal(path, readonly=True) if path else store.open(journal_id)
    except StoreArgumentError as exc:
        store.close()
        raise UsageError(str(exc)) from exc
    except BaseException:
        store.close()
        raise
    return _InStore(journal, store)


def blobs_of(journal: SessionJournal, path: Path | None) -> Any:
    """The blob store a command reads a journal's blobs from: its store's (`--store`), or for a journal
    file inside a directory store (`DIR/journals/ID.jsonl`), that store's; otherwise None. The store's
    blobs are reached only when a blob is read, so a journal without blobs never needs them."""
    if isinstance(journal, _InStore):
        return _StoreBlobs(journal.store)
    if path is not None:
        place = path.resolve().parent
        store = place.parent
        if place.name == "journals" and (store / "catalog.jsonl").is_file() and (store / "blobs").is_dir():
            from waybook.stores._blob_files import FileBlobs

            return FileBlobs(store)
    return None


class _StoreBlobs:
    """A store's blobs, opened on the first read."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store

    def read(self, digest: str) -> bytes:
        from waybook.stores._blobs import NoBlobStoreError

        try:
            blobs = self._store.blobs
        except NotImplementedError as exc:
            msg = f"{exc}: the journal references blob sha256:{digest}, which cannot be read from this store"
            raise NoBlobStoreError(msg) from exc
        data: bytes = blobs.read(digest)
        return data


def verify_in_store(url: str, journal_id: str) -> VerifyReport:
    """`verify` for a journal in a store: a directory store's file is verified like any JSONL file."""
    from waybook.journal import verify, verify_file
    from waybook.stores import DatabaseJournal, DatabaseStore, StoreArgumentError

    with connect_store(url) as store:
        try:
            path = journal_file_in_store(store, journal_id)
            if path is not None:
                return verify_file(path)
            if isinstance(store, DatabaseStore):  # read the stored lines without proving them first
                if not store.exists(journal_id):
                    store.open(journal_id)  # raises the typed error: unknown or purged
                return verify(DatabaseJournal(store.engine, journal_id))
            with store.open(journal_id) as journal:
                return verify(journal)
        except StoreArgumentError as exc:
            raise UsageError(str(exc)) from exc


def file_to_repair(url: str, journal_id: str) -> Path | None:
    """The file `waybook repair --store` works on; None (having said why) for stores without files."""
    with connect_store(url) as store:
        path = journal_file_in_store(store, journal_id)
        if path is None:
            if not store.exists(journal_id):
                store.open(journal_id)  # raises the typed error: unknown or purged
            sys.stdout.write(
                f"{journal_id}: no damage; nothing to repair (a database store commits whole transactions, "
                "so it never has a torn tail)\n"
            )
        return path


def import_into_store(store: JournalStore, journal_id: str, staging: SessionJournal) -> None:
    """Copy a validated journal into a new journal of `store`, with its own header, batch by batch: the
    records are sealed again to the same bytes, so every digest is kept."""
    from waybook.journal import Header
    from waybook.stores import JournalExistsError, StoreArgumentError
    from waybook.stores._copying import copy_records

    records = list(staging.read())
    header = records[0].body if records else None
    role = header.role if isinstance(header, Header) else "session"
    metadata = dict(header.metadata) if isinstance(header, Header) else {}
    try:
        with store.create(journal_id, role=role, metadata=metadata, header=False) as journal:
            copy_records(records, journal)
    except (StoreArgumentError, JournalExistsError) as exc:
        raise UsageError(str(exc)) from exc


class _InStore:
    """A journal that closes its store with it."""

    def __init__(self, journal: SessionJournal, store: JournalStore) -> None:
        self._journal = journal
        self._store = store

    @property
    def store(self) -> JournalStore:
        return self._store

    @property
    def name(self) -> str:
        return self._journal.name

    def head(self) -> Head:
        return self._journal.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        return self._journal.append(records, expected=expected)

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        return self._journal.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self._journal.read_lines(after, limit)

    def flush(self) -> None:
        self._journal.flush()

    def close(self) -> None:
        try:
            self._journal.close()
        finally:
            self._store.close()

    def __enter__(self) -> _InStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
