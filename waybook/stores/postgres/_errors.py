"""Errors of the PostgreSQL store. Each is a `StorageError` (so also an `OSError`) under `JournalError`."""

from __future__ import annotations

from waybook.model import StorageError


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


class ConnectionLostError(StorageError):
    """The connection to the server failed in the middle of a write, or no connection could be made.

    Whether a write committed is then unknown to this process; resending the same batch with the same
    expected head is safe (R7): a batch that committed returns its original result.
    """

    def __init__(self, *, store: str, doing: str, cause: BaseException, advice: str | None = None) -> None:
        self.store = store
        self.doing = doing
        detail = " ".join(str(cause).split()) or type(cause).__name__
        if doing == "open the store":
            msg = (
                f"{store}: could not open the store: no connection to PostgreSQL ({detail}). Check that the "
                "server is running and that the URL's host, port, user and database are right; the URL "
                "option retry_for=SECONDS says how long to keep trying."
            )
        elif advice is not None:
            msg = f"{store}: could not {doing}: the connection to PostgreSQL failed ({detail}). {advice}"
        else:
            msg = (
                f"{store}: could not {doing}: the connection to PostgreSQL failed ({detail}). If this was "
                "an append, resend the same batch with the same expected head once the server answers: a "
                "batch that did commit returns its original result and is not written twice."
            )
        super().__init__(msg)
