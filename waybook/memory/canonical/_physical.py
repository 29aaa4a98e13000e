"""Which physical store a journal handle writes to: two handles on one store are one authority.

Working and canonical memory must be distinct physical authorities. Equal objects and equal header ids
are caught by the core; this catches two handles opened separately on one store before either header is
written: the same file (a JSONL journal, reached by any path or link: device and inode), or the same
journal of one database store (its URL, which names the database and schema, and its journal id, as
the adapter's `name` shows them; any handle with a `journal_id` is a store's, named by its `name`). A
journal that names no place (in-memory) has no physical identity.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from waybook.journal import SessionJournal

_STORE_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S* \S+")
"""How a database store's journal names itself: `<store URL> <journal id>` (sqlite:, postgresql:, ...)."""
_WRAPS: Final = ("inner",)
"""The public attribute a wrapper adapter (a fed or read-only view) names the journal it wraps by."""

Identity = tuple[str, ...]


def physical_identity(journal: SessionJournal) -> Identity | None:
    """The store `journal` writes to, or None when it names no physical place."""
    seen: set[int] = set()
    current: object = journal
    while id(current) not in seen:
        seen.add(id(current))
        path = getattr(current, "path", None)
        if isinstance(path, str | os.PathLike):
            return _file_identity(Path(path))
        inner = next((getattr(current, a) for a in _WRAPS if getattr(current, a, None) is not None), None)
        if inner is None:
            break
        current = inner
    name = getattr(journal, "name", None)
    if not isinstance(name, str):
        return None
    if _STORE_NAME.fullmatch(name) or isinstance(getattr(journal, "journal_id", None), str):
        return ("store", name)
    candidate = Path(name)
    if candidate.is_absolute() and candidate.is_file():
        return _file_identity(candidate)
    return None


def _file_identity(path: Path) -> Identity:
    try:
        stat = path.stat()
    except OSError:
        return ("path", str(path.resolve()))
    return ("file", str(stat.st_dev), str(stat.st_ino))
