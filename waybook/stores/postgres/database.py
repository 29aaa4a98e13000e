"""Connections to the server: a psycopg pool per store, and a bounded retry around every operation.

A connection can break at any moment (a restart, `pg_terminate_backend`, a network cut). Every store
operation is safe to run again: reads trivially, appends because a resent batch that already committed
is recognised and returns its original result (R7). So an operation that fails with a connection-class
error runs again on a fresh connection, with backoff, for up to `retry_for` seconds, and only then
raises `ServerUnavailableError`. Errors the caller caused are never retried.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from waybook.stores.postgres.errors import ServerUnavailableError

T = TypeVar("T")

RETRY_FOR: Final = 30.0
"""Seconds an operation keeps retrying on fresh connections (a server restart takes a few)."""

_FIRST_BACKOFF: Final = 0.02
_MAX_BACKOFF: Final = 1.0

Connection = psycopg.Connection[tuple[object, ...]]
AsyncConnection = psycopg.AsyncConnection[tuple[object, ...]]


def transient(exc: BaseException) -> bool:
    """Whether `exc` means "the connection or the server failed", so that running again may succeed.

    OperationalError covers a lost connection, an administrator shutdown or termination, a server still
    starting, a pool timeout, serialization failures and deadlocks. Errors in the statement or the data
    (ProgrammingError, DataError, IntegrityError) are bugs or bad input and are not retried.
    """
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def label(conninfo: str) -> str:
    """`conninfo` without its password, for messages and journal names."""
    if "://" not in conninfo:
        return " ".join(p for p in conninfo.split() if not p.startswith("password="))
    parts = urllib.parse.urlsplit(conninfo)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{parts.path}"


class Backoff:
    def __init__(self, retry_for: float) -> None:
        self.deadline = time.monotonic() + retry_for
        self.retry_for = retry_for
        self.delay = _FIRST_BACKOFF

    def next_delay(self) -> float | None:
        """Seconds to wait before the next attempt, or None when the window is spent."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return None
        delay, self.delay = min(self.delay, remaining), min(self.delay * 2, _MAX_BACKOFF)
        return delay


class Database:
    """A connection pool (autocommit connections) and the retry policy, for one store in one process.

    Open it in the process that uses it: a pool must not cross a fork.
    """

    def __init__(self, conninfo: str, *, max_size: int = 8, retry_for: float = RETRY_FOR) -> None:
        self.label = label(conninfo)
        self.retry_for = retry_for
        self.pool: ConnectionPool[Connection] = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True},
            timeout=min(retry_for, 10.0) or 1.0,
            reconnect_timeout=max(retry_for, 1.0),
            open=True,
        )

    def run(self, operation: str, fn: Callable[[Connection], T]) -> T:
        """`fn(connection)`, run again on a fresh connection while it fails for transient reasons."""
        backoff = Backoff(self.retry_for)
        while True:
            try:
                with self.pool.connection() as conn:
                    return fn(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                delay = backoff.next_delay()
                if delay is None:
                    raise ServerUnavailableError(
                        store=self.label, operation=operation, seconds=self.retry_for, cause=exc
                    ) from exc
                time.sleep(delay)

    def close(self) -> None:
        self.pool.close()


class AsyncDatabase:
    """The asyncio twin of `Database`. Create it inside a running event loop, then `await open()`."""

    def __init__(self, conninfo: str, *, max_size: int = 8, retry_for: float = RETRY_FOR) -> None:
        self.label = label(conninfo)
        self.retry_for = retry_for
        self.pool: AsyncConnectionPool[AsyncConnection] = AsyncConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True},
            timeout=min(retry_for, 10.0) or 1.0,
            reconnect_timeout=max(retry_for, 1.0),
            open=False,
        )

    async def open(self) -> None:
        await self.pool.open()

    async def run(self, operation: str, fn: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        backoff = Backoff(self.retry_for)
        while True:
            try:
                async with self.pool.connection() as conn:
                    return await fn(conn)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                delay = backoff.next_delay()
                if delay is None:
                    raise ServerUnavailableError(
                        store=self.label, operation=operation, seconds=self.retry_for, cause=exc
                    ) from exc
                await asyncio.sleep(delay)

    async def close(self) -> None:
        await self.pool.close()
