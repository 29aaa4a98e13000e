"""Errors of the PostgreSQL store. Each is a `StorageError` (an `OSError` too) under `JournalError`."""

from __future__ import annotations

from waybook.journal.errors import StorageError


class SchemaTooNewError(StorageError):
    """The database was migrated by a newer waybook; this code must not write to it."""

    def __init__(self, *, found: int, known: int, schema: str) -> None:
        self.found = found
        self.known = known
        msg = (
            f"PostgreSQL schema {schema!r} is at waybook schema version {found}, newer than the {known} "
            "this waybook knows; nothing was changed. Upgrade waybook to open this store."
        )
        super().__init__(msg)


class ServerUnavailableError(StorageError):
    """The server could not be reached (or kept dropping the connection) for the whole retry window."""

    def __init__(self, *, store: str, operation: str, seconds: float, cause: BaseException) -> None:
        self.store = store
        self.operation = operation
        msg = (
            f"{store}: {operation} failed: no usable connection to PostgreSQL for {seconds:.0f}s "
            f"({type(cause).__name__}: {str(cause).strip()}). If it was an append, resend the same batch "
            "with the same expected head once the server is back: a batch that did commit returns its "
            "original result and is not written twice."
        )
        super().__init__(msg)


class JournalMissingError(StorageError, LookupError):
    """The journal is not in the store (never created, or purged)."""

    def __init__(self, *, journal: str) -> None:
        self.journal = journal
        msg = f"{journal}: no such journal in this store (never created, or purged); create it first"
        super().__init__(msg)
