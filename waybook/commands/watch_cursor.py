"""`waybook watch`'s durable cursors: for each source file followed, which file it was, how far it was read
and which journal of the store holds it.

A cursor is a small JSON file in the watcher's state folder (`$WAYBOOK_HOME/watch/<store key>/`, one file
per source), replaced whole (written beside, fsynced, renamed) after every append to the store, so it is
never ahead of the journal. It is a promise the watcher checks, never trusts blindly: after a restart the
file must still be the same file (device and inode), at least as long, with the same last line taken
(its SHA-256), and the journal's head must be the one recorded; anything else sends the watcher to the
slow path (the import is rebuilt from the file and compared with the journal, record by record). So a
SIGKILL between an append and the cursor's save loses nothing and duplicates nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Final

import attrs

from waybook._files import fsync_dir, replace_private

VERSION: Final = 1


@attrs.frozen(kw_only=True)
class Cursor:
    """How far one source file was followed into one journal of the store."""

    source: str
    """The source file's path (absolute, as the watcher found it)."""
    format: str
    journal: str
    """The journal of the store the source imports into (its current generation)."""
    generation: int = 1
    """1, then 2, 3, ... each time the source was truncated, rewritten or replaced (a new journal)."""
    base: str = ""
    """The journal of generation 1; generation N imports as `<base>.vN`."""
    device: int = 0
    inode: int = 0
    offset: int = 0
    """Bytes of the source read (the end of the last line taken)."""
    line: int = 0
    """The number of the last line taken."""
    line_start: int = 0
    """Where the last line taken starts."""
    line_sha256: str = ""
    """SHA-256 of the last line taken (its bytes, without the newline)."""
    final: int = 0
    """How many of the journal's records no later line can change; the records after them (up to
    `records`) were written when the source settled, and a later line must agree with them."""
    records: int = 0
    """The journal's head seq after the watcher's last append."""
    head: str = ""
    """The journal's head digest then."""
    replaces: str | None = None
    """The journal of the generation before this one."""

    def as_json(self) -> dict[str, Any]:
        return {"version": VERSION, **attrs.asdict(self)}


def line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


class Cursors:
    """The cursors of one store's watcher, a file each, in `folder` (created on first save)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_of(self, source: str) -> Path:
        return (
            self.folder / f"{hashlib.sha256(source.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}.json"
        )

    def load(self, source: str) -> Cursor | None:
        """The cursor of `source`, or None (never followed, or a cursor file that does not read as one:
        then the slow path rebuilds it)."""
        try:
            raw = json.loads(self.path_of(source).read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.pop("version", None) != VERSION:
            return None
        try:
            cursor = Cursor(**raw)
        except TypeError:
            return None
        return cursor if cursor.source == source else None

    def save(self, cursor: Cursor) -> None:
        """Replace the cursor's file whole: written beside, fsynced, renamed, the folder fsynced."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = json.dumps(cursor.as_json(), sort_keys=True).encode("utf-8", "surrogatepass")
        replace_private(self.path_of(cursor.source), data)
        fsync_dir(self.folder)
