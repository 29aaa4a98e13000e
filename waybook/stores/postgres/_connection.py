"""Connections to PostgreSQL: the retry policy, the session settings, and URLs safe to show.

Connections fail: a read statement, and the first statement of a write, run again on a fresh
connection for up to `retry_for` seconds (RETRY_FOR by default), pausing by `Backoff` between tries;
`transient` tells such a failure of the connection or the server from a failure of the statement. A
write that fails later raises ConnectionLostError; the journal then resends the batch, which R7 makes
safe (see _store.py). Every pooled connection is configured with `configure`.
"""

from __future__ import annotations

import ipaddress
import socket
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Final

import psycopg

RETRY_FOR: Final = 30.0
"""Seconds an operation keeps trying fresh connections (a server restart takes a few)."""


class Connection(psycopg.Connection[tuple[Any, ...]]):
    """A pooled connection that keeps one binary cursor for the statements run on it on their own
    (`statements`): a cursor made per statement sets up its adapters and dumpers anew each time, which
    cost the client of a one-record append a quarter of its CPU."""

    _statements: psycopg.Cursor[tuple[Any, ...]] | None = None

    @property
    def statements(self) -> psycopg.Cursor[tuple[Any, ...]]:
        cursor = self._statements
        if cursor is None or cursor.closed:
            cursor = self._statements = self.cursor(binary=True)
        return cursor


Params = Sequence[object] | Mapping[str, object] | None
"""A statement's parameters: positional (`%s`) or named (`%(name)s`, each sent once however often used)."""

Statement = tuple[str, Params]

_SETTINGS: Final = (
    # An acknowledged append must survive a crash, and a reader must never see a commit that a crash
    # could take back (a position would be handed out again). Every waybook function (and the append
    # statement) also sets synchronous_commit in its own transaction, which is what holds behind a
    # pooler (PgBouncer). A client that stalls inside a transaction must not hold a journal's row for
    # long. The last four columns are the TCP connection as the server sees it (see `direct`).
    "SELECT set_config('synchronous_commit', 'on', false),"
    " set_config('idle_in_transaction_session_timeout', '60s', false),"
    " host(inet_client_addr()), inet_client_port(), host(inet_server_addr()), inet_server_port()"
)

PREPARE_AFTER: Final = 1
"""On a direct connection, a statement is prepared on the server the second time it runs (psycopg's
`prepare_threshold`): appends and reads skip parsing and planning from then on, and a statement run
once (a migration) is never prepared."""


class Backoff:
    """Growing pauses between attempts, until `seconds` have passed."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.delay = 0.02

    def pause(self) -> bool:
        """Sleep before the next attempt; False (without sleeping) when the time is spent."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(self.delay, remaining))
        self.delay = min(self.delay * 2, 1.0)
        return True


def public_url(conninfo: str) -> str:
    """`conninfo` with any password removed: what messages and journal names show."""
    if "://" not in conninfo:
        return " ".join(p for p in conninfo.split() if not p.lower().startswith("password="))
    parts = urllib.parse.urlsplit(conninfo)
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k.lower() != "password"]
    encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, encoded, ""))


def transient(exc: BaseException) -> bool:
    """A failure of the connection or the server (not of the statement): trying again may succeed."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def configure(conn: Connection) -> None:
    """The session settings every pooled connection starts with (see _SETTINGS); server-side prepared
    statements on a connection that reaches the server directly (see `direct`), none otherwise."""
    row = conn.execute(_SETTINGS.encode()).fetchone()
    seen = tuple(row[2:]) if row else ()
    conn.prepare_threshold = PREPARE_AFTER if direct(conn, seen) else None


def direct(conn: Connection, seen: Sequence[object]) -> bool:
    """Whether `conn` talks to its server process itself: the TCP connection the server sees (`seen`:
    client address and port, server address and port) is this socket's own. A statement prepared on
    a server session is only safe to run again where the next statement surely reaches the same
    session; behind a pooler in transaction mode (PgBouncer before 1.21 runs each transaction on any
    server connection, where a statement of the same name may be another client's) or any proxy, the
    server sees the pooler's socket, not this one. A Unix socket, whose ends have no such names, counts
    as not direct: preparing is an optimisation, refusing it is always safe."""
    if len(seen) != 4 or any(value is None for value in seen):
        return False
    sock = socket.socket(fileno=conn.pgconn.socket)
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return False
        local, peer = sock.getsockname(), sock.getpeername()
    except OSError:
        return False
    finally:
        sock.detach()  # the socket stays libpq's
    try:
        ours = (ipaddress.ip_address(local[0]), local[1], ipaddress.ip_address(peer[0]), peer[1])
        theirs = (ipaddress.ip_address(str(seen[0])), seen[1], ipaddress.ip_address(str(seen[2])), seen[3])
    except ValueError:
        return False
    return ours == theirs
