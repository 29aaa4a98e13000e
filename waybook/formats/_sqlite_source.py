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
from typing import Final

from waybook.formats._source_files import check_regular

SIDE_FILES: Final = ("-wal", "-journal", "-shm")
"""The files SQLite keeps beside a database, which it opens by their names."""


def open_read_only(path: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A read-only connection to `path` that creates no file beside it when the database is quiet.

    The database must be a regular file (a link the caller names is followed), and each file SQLite
    would open beside it a regular file in the same folder: a FIFO would block the read, and a link
    elsewhere would bring another database's log into this one (`RefusedFileError`, naming the file)."""
    check_regular(path)
    database = path.resolve()
    beside = [database.with_name(database.name + suffix) for suffix in SIDE_FILES]
    present = [side for side in beside if side.exists() or side.is_symlink()]
    for side in present:
        check_regular(side, inside=database.parent, where="database's folder")
    busy = any(side.name.endswith(("-wal", "-journal")) for side in present)
    flags = "mode=ro" if busy else "mode=ro&immutable=1"
    return sqlite3.connect(f"{database.as_uri()}?{flags}", uri=True, check_same_thread=check_same_thread)
