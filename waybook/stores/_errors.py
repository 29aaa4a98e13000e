"""Errors a store can raise, under the journal hierarchy (`JournalError`) so one `except` catches all.

Each carries the journal id or the store it concerns, and says what to do next.
"""

from __future__ import annotations

from typing import ClassVar

from waybook.model import ConflictError, Head, IntegrityError, JournalError, StorageError


class StoreError(JournalError):
    """Base of errors about a store rather than one journal's records."""


class StoreArgumentError(StoreError, ValueError):
    """An argument to a store method is not valid (a role, a cursor, a limit, a reason). Nothing changed."""


class InvalidStoreUrlError(StoreArgumentError):
    """`open_store` was given a URL it cannot open."""


class StoreNotFoundError(InvalidStoreUrlError, LookupError):
    """`open_store(url, create=False)` found no store where `url` points. Nothing was created.

    `reason` says what is missing there, so a command can name its own option in the message."""

    def __init__(self, *, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        msg = f"{url}: {reason}; open_store(url) without create=False creates an empty store there"
        super().__init__(msg)


class InvalidJournalIdError(StoreArgumentError):
    """A journal id is not a valid id (it also names files, so it is checked before anything is written)."""


class _JournalOfStoreError(JournalError):
    """An error about one journal id of a store: it carries `store` and `journal_id` (and whatever a
    subclass adds), and its class's `_message` says what happened and what to do, naming those
    attributes in braces (`str.format`)."""

    _message: ClassVar[str]

    def __init__(self, *, store: str, journal_id: str) -> None:
        self.store = store
        self.journal_id = journal_id
        super().__init__(self._message.format_map(vars(self)))


class UnknownJournalError(_JournalOfStoreError, StoreError, LookupError):
    """No journal with this id exists in the store."""

    _message = (
        "{store}: no journal {journal_id!r}; create it with store.create({journal_id!r}) or list the "
        "store's journals (`waybook ls --store URL`)"
    )


class JournalExistsError(_JournalOfStoreError, ConflictError):
    """`create` was given an id that is already a journal of the store."""

    _message = "{store}: journal {journal_id!r} already exists; open it with store.open({journal_id!r})"


class JournalPurgedError(_JournalOfStoreError, StoreError, LookupError):
    """The journal was purged: its bytes are gone and its id is retired (the catalog keeps the receipt)."""

    _message = (
        "{store}: journal {journal_id!r} was purged; its records are erased and its id cannot be reused "
        "(feed positions would otherwise point at another journal). Use a new id"
    )


class HeaderMismatchError(_JournalOfStoreError, StoreArgumentError):
    """Lines or a header record given to a store for journal `journal_id` start with a header naming
    another journal (`header_journal`): a store's journal names its own id in its header, so an auditor
    reading either knows which journal is meant. Nothing was written."""

    _message = (
        "{store}: journal {journal_id!r} would start with a header naming journal {header_journal!r}; a "
        "store's journal names its own id in its header. Create it as {header_journal!r}, or give a new "
        "header naming {journal_id!r} (a migrated copy: `waybook migrate --store URL {header_journal} --to "
        "{journal_id}`); nothing was written"
    )

    def __init__(self, *, store: str, journal_id: str, header_journal: str) -> None:
        self.header_journal = header_journal
        super().__init__(store=store, journal_id=journal_id)


class StoreBusyError(StorageError, TimeoutError):
    """The store stayed locked by other writers for longer than the store's bounded wait. Nothing was
    written; retry later, or raise the store's `busy_timeout`."""


class ReservedJournalError(StoreArgumentError):
    """The catalog journal is the store's own: it is read through the store, never written by callers."""


class LostRecordsError(_JournalOfStoreError, IntegrityError, StoreError):
    """A journal holds less than the store committed to it: records (or its whole file) were removed
    behind the store's back: a file truncated, emptied, deleted or replaced, rows deleted. The store
    knows each journal's committed head (`committed`); `found` says what is there instead. Nothing is
    served from it and nothing is written to it: restore it from a copy."""

    _message = (
        "{store}: journal {journal_id!r} lost records: the store committed it through seq {committed.seq} "
        "(digest {committed.digest:.12}...), but {found}. It was changed outside waybook; restore it from "
        "a copy (`waybook verify --store URL` names every damaged journal)"
    )

    def __init__(self, *, store: str, journal_id: str, committed: Head, found: str) -> None:
        self.committed = committed
        self.found = found
        super().__init__(store=store, journal_id=journal_id)
