"""Another tool's SQLite database, opened so that reading it leaves nothing beside it.

SQLite creates `-wal` and `-shm` files beside a WAL-mode database whenever a connection opens it, even a
read-only one, and leaves them there when that connection cannot checkpoint; where the folder is
read-only (evidence mounted for an audit) the open fails instead. A WAL database with no `-wal` file,
and a rollback-mode one with no `-journal` file, is one no process has open or left mid-transaction:
every commit is in the main file, so it is opened `immutable` and nothing is created. A database some
process has open (or a crash left a journal for) is opened read-only as it is, sharing the files that
are already there. A writer that opens the database in the moment between the check and the read is
not seen; an import reads a snapshot of a quiet database, as copying it would.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_read_only(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A read-only connection to `path` that creates no file beside it when the database is quiet."""
    busy = any(path.with_name(path.name + suffix).exists() for suffix in ("-wal", "-journal"))
    flags = "mode=ro" if busy else "mode=ro&immutable=1"
    return sqlite3.connect(
        f"{path.resolve().as_uri()}?{flags}", uri=True, check_same_thread=check_same_thread
    )
