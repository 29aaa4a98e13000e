"""`--store URL`: the CLI's one way to name a store, and a journal in it instead of a file.

Every command that takes the option adds it with `add_store_option(parser, ...)`. A command on journals
(`--store URL JOURNAL_ID`) opens its journal with `common.open_journal(args.path, args.store)`: with
`--store`, PATH is a journal id. A command on a whole store (`ls`, `gc`, `search`) requires the option
and opens the store with `connect_store`; only `import` creates one (`create_store`). How a store keeps
its journals is the store's own business (`waybook.stores`: `open_journal`, `prove`, `blobs_for`); this
module parses the option and says the stores' argument errors as usage errors (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from waybook.commands.exits import UsageError
from waybook.journal import SessionJournal
from waybook.model import Head, Header, Record
from waybook.stores import (
    JournalExistsError,
    JournalFiles,
    JournalPurgedError,
    JournalStore,
    SealedCreating,
    SealedJournal,
    StoreArgumentError,
    StoreNotFoundError,
    UnknownJournalError,
    copy_records,
    open_journal,
    open_store,
)

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


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """The stores' argument errors (a bad URL, a bad journal id, no store there) as usage errors."""
    try:
        yield
    except StoreNotFoundError as exc:
        msg = f"--store {exc.url}: {exc.reason}; `waybook import ... --store URL` creates a store"
        raise UsageError(msg) from exc
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


class UnknownJournalInStoreError(UnknownJournalError):
    """No journal of this id in the `--store` a command was given (a problem, exit 1), said in the CLI's
    terms: the store's own message tells a Python caller to `store.create` it."""

    _message = (
        "no journal {journal_id!r} in --store {store}; `waybook ls --store {store}` lists its journals "
        "(`--hidden` the hidden ones)"
    )


@contextlib.contextmanager
def journal_id_errors(url: str, *, doing: str, to: str | None = None) -> Iterator[None]:
    """The stores' errors about a journal id in the CLI's terms, for a command `doing` something to a
    journal of `--store url` (and writing a new one `--to`): an unknown id is UnknownJournalInStoreError
    (exit 1, as `show` says it), a purged or taken id a usage error naming the option."""
    try:
        yield
    except UnknownJournalInStoreError:
        raise
    except UnknownJournalError as exc:
        raise UnknownJournalInStoreError(store=url, journal_id=exc.journal_id) from None
    except JournalPurgedError as exc:
        if exc.journal_id == to:
            msg = f"--to {to!r}: that id was purged from --store {url} (ids are never reused); give a new one"
        else:
            msg = (
                f"{exc.journal_id} was purged from --store {url}: its records are erased; nothing to {doing}"
            )
        raise UsageError(msg) from exc
    except JournalExistsError as exc:
        msg = (
            f"--to {exc.journal_id!r}: --store {url} has a journal of that id already; {doing} writes a new "
            "journal, never into one: give a new id"
        )
        raise UsageError(msg) from exc


def metadata_pair(item: str) -> tuple[str, Any]:
    """`--meta KEY=VALUE` (`ls`, `retain`) as the key and the value to match: VALUE as JSON where it reads
    as a value JSON can hold (`1`, `true`, `"1"`, `[1]`), else its text; a usage error without `=`."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        msg = f"--meta {item!r:.60}: give KEY=VALUE (a metadata key and the value it holds)"
        raise UsageError(msg)
    try:
        return key, json.loads(value, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON, NaN or infinity, or nested past Python's stack
        return key, value


def _no_constant(name: str) -> None:
    msg = f"JSON has no {name}"
    raise ValueError(msg)


def connect_store(url: str) -> JournalStore:
    """Open an existing store for a command: a store that is not there is a usage error (a command
    never creates one by mistake), as is a bad URL."""
    with store_errors():
        return open_store(url, create=False)


def create_store(url: str) -> JournalStore:
    """Open the store at `url` for `import`, creating it if it is missing; a bad URL is a usage error."""
    with store_errors():
        return open_store(url)


def open_in_store(url: str, journal_id: str) -> SessionJournal:
    """The journal `journal_id` of the store at `url`, read-only (closing the store when it is closed)."""
    with store_errors():
        return open_journal(url, journal_id)


def file_to_repair(url: str, journal_id: str) -> Path | None:
    """The file `waybook repair --store` works on; None (having said why) for stores without files."""
    with connect_store(url) as store, store_errors():
        if isinstance(store, JournalFiles):
            return store.file_of(journal_id)
        if not store.exists(journal_id):
            store.open(journal_id)  # raises the typed error: unknown or purged
    sys.stdout.write(
        f"{journal_id}: no damage; nothing to repair (a database store commits whole transactions, "
        "so it never has a torn tail)\n"
    )
    return None


class Staged(Protocol):
    """A checked journal waiting to be written: an `InMemoryJournal`, or one spooled to disk."""

    def head(self) -> Head: ...

    def read(self, after: int = 0) -> Iterator[Record]: ...

    def read_lines(self, after: int = 0) -> Iterator[bytes]: ...


def import_into_store(store: JournalStore, journal_id: str, staging: Staged) -> None:
    """Copy a validated journal into a new journal of `store`, with its own header, batch by batch: the
    records are sealed again to the same bytes, so every digest is kept."""
    records = list(staging.read())
    header = records[0].body if records else None
    role = header.role if isinstance(header, Header) else "session"
    metadata = dict(header.metadata) if isinstance(header, Header) else {}
    try:
        with store.create(journal_id, role=role, metadata=metadata, header=False) as journal:
            copy_records(records, journal)
            journal.flush()  # durable before the import reports (a store written with durability=flush)
    except (StoreArgumentError, JournalExistsError) as exc:
        raise UsageError(str(exc)) from exc


SEALED_BATCH_BYTES = 32 << 20
SEALED_BATCH_JOURNALS = 64
"""A store that creates journals whole (SealedCreating) gets them in batches of at most this many bytes
and journals: their fsyncs are committed together, and memory holds one batch."""


def import_sealed_into_store(store: SealedCreating, staged: Iterable[tuple[str, Staged]]) -> None:
    """Create each validated journal in `store` whole from its sealed lines (the bytes
    `import_into_store` would append, record by record), in batches: one write and one shared fsync a
    journal, one catalog batch and one directory fsync a batch. Each batch is durable (files and
    directory) before its journals are catalogued."""
    batch: list[SealedJournal] = []
    size = 0
    for journal_id, staging in staged:
        journal = SealedJournal.of(journal_id, staging.read_lines(), staging.head())
        batch.append(journal)
        size += len(journal.data)
        if size >= SEALED_BATCH_BYTES or len(batch) >= SEALED_BATCH_JOURNALS:
            _create_sealed(store, batch)
            batch, size = [], 0
    if batch:
        _create_sealed(store, batch)


def _create_sealed(store: SealedCreating, batch: list[SealedJournal]) -> None:
    try:
        store.create_sealed(batch)
    except (StoreArgumentError, JournalExistsError) as exc:
        raise UsageError(str(exc)) from exc
