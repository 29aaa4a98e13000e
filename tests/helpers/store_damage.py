"""Damage done to a store behind its back, the way a disk, an operator or another program does it:
a journal's tail removed, its storage lost, a record's bytes changed (same length). Each works on the
store's own storage (files, SQLite rows, PostgreSQL rows), never through waybook, so the store under
test meets the damage as it would in the field.

Which store a URL names decides how (`file:`, `sqlite:`, `postgresql://`); the in-process store keeps
nothing outside itself and cannot be damaged this way.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from waybook.stores._url import local_path


def _journal_file(url: str, journal_id: str) -> Path:
    directory = local_path(url)
    assert url.startswith("file:")
    assert directory is not None
    return directory / "journals" / f"{journal_id}.jsonl"


def _line_starts(path: Path) -> list[int]:
    starts, offset = [], 0
    with path.open("rb") as file:
        for line in file:
            starts.append(offset)
            offset += len(line)
    return [*starts, offset]


def lose_tail(url: str, journal_id: str, keep: int) -> None:
    """Remove every record after seq `keep` (a truncated file; deleted rows, the head row untouched)."""
    if url.startswith("file:"):
        path = _journal_file(url, journal_id)
        os.truncate(path, _line_starts(path)[keep])
    elif url.startswith("sqlite:"):
        with sqlite3.connect(local_path(url)) as conn:  # type: ignore[arg-type]
            conn.execute("DELETE FROM records WHERE journal_id = ? AND seq > ?", (journal_id, keep))
    else:
        _postgres(url, "DELETE FROM waybook_records WHERE journal_id = %s AND seq > %s", (journal_id, keep))


def lose_storage(url: str, journal_id: str, *, how: str = "deleted") -> None:
    """Lose the journal's storage: its file deleted (`how="deleted"`) or replaced by a directory
    (`"folder"`), or emptied (`"emptied"`: truncated to 0 bytes); in a database, every row deleted."""
    if url.startswith("file:"):
        path = _journal_file(url, journal_id)
        if how == "emptied":
            os.truncate(path, 0)
            return
        path.unlink()
        if how == "folder":
            path.mkdir()
        return
    lose_tail(url, journal_id, 0)


def replace_file(url: str, journal_id: str, other: str) -> None:
    """Copy journal `other`'s file over `journal_id`'s (a directory store: a file replaced)."""
    shutil.copyfile(_journal_file(url, other), _journal_file(url, journal_id))


def alter_record(url: str, journal_id: str, seq: int) -> None:
    """Change one byte inside record `seq`'s text, keeping its length: the bytes no longer hash to its
    digest, which a reader must notice however long ago it proved them."""

    def altered(line: bytes) -> bytes:
        at = line.index(b'"text":"') + len(b'"text":"')
        return line[:at] + (b"Y" if line[at : at + 1] != b"Y" else b"Z") + line[at + 1 :]

    if url.startswith("file:"):
        path = _journal_file(url, journal_id)
        starts = _line_starts(path)
        with path.open("r+b") as file:
            file.seek(starts[seq - 1])
            line = file.read(starts[seq] - starts[seq - 1])
            file.seek(starts[seq - 1])
            file.write(altered(line))
    elif url.startswith("sqlite:"):
        with sqlite3.connect(local_path(url)) as conn:  # type: ignore[arg-type]
            (line,) = conn.execute(
                "SELECT line FROM records WHERE journal_id = ? AND seq = ?", (journal_id, seq)
            ).fetchone()
            conn.execute(
                "UPDATE records SET line = ? WHERE journal_id = ? AND seq = ?",
                (altered(bytes(line)), journal_id, seq),
            )
    else:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT line FROM waybook_records WHERE journal_id = %s AND seq = %s", (journal_id, seq)
            ).fetchone()
            assert row is not None
            conn.execute(
                "UPDATE waybook_records SET line = %s WHERE journal_id = %s AND seq = %s",
                (altered(bytes(row[0])), journal_id, seq),
            )


def _postgres(url: str, statement: str, params: tuple[object, ...]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement.encode(), params)
