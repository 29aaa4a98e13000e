"""Connections to PostgreSQL: the retry policy, the session settings, and URLs safe to show.

Connections fail: a read statement, and the first statement of a write, run again on a fresh
connection for up to `retry_for` seconds (RETRY_FOR by default), pausing by `Backoff` between tries;
`transient` tells such a failure of the connection or the server from a failure of the statement. A
write that fails later raises ConnectionLostError; the journal then resends the batch, which R7 makes
safe (see _store.py). Every pooled connection is configured with `configure`.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Sequence
from typing import Any, Final

import psycopg

RETRY_FOR: Final = 30.0
"""Seconds an operation keeps trying fresh connections (a server restart takes a few)."""

Connection = psycopg.Connection[tuple[Any, ...]]
Statement = tuple[str, Sequence[object] | None]

_SETTINGS: Final = (
    # An acknowledged append must survive a crash, and a reader must never see a commit that a crash
    # could take back (a position would be handed out again). Every waybook function also sets
    # synchronous_commit in its own transaction, which is what holds behind a pooler (PgBouncer). A
    # client that stalls inside a transaction must not hold a journal's row for long.
    "SELECT set_config('synchronous_commit', 'on', false),"
    " set_config('idle_in_transaction_session_timeout', '60s', false)"
)


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
    """The session settings every pooled connection starts with (see _SETTINGS)."""
    conn.execute(_SETTINGS.encode())
