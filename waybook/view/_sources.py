"""Where a served or `--store` page reads what a journal only references: blob bytes and memory files.

Every read is bounded and proven: a blob's bytes are checked against their digest as they stream
(`blobs.open` raises on a mismatch), and a memory journal is replayed through its own rules to the seq
the turn used. Anything missing reads as None: the page says so instead of failing.
"""

from __future__ import annotations

from typing import Any

from waybook.memory.working import MemoryProjection
from waybook.model import JournalError
from waybook.projections import replay
from waybook.stores import JournalStore, StoreError, open_journal
from waybook.view._data import SHOWN_MEMORY_FILES

FIRST_LINE_CHARS = 160


class StoreSources:
    """`Sources` over `store`: its blobs and its memory journals."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store

    def blob(self, digest: str) -> bytes | None:
        try:
            with self._store.blobs.open(digest) as stream:
                data: bytes = stream.read()
        except (JournalError, StoreError, OSError, LookupError):
            return None
        return data

    def memory_files(self, journal_id: str, seq: int) -> list[dict[str, Any]] | None:
        try:
            with open_journal(self._store, journal_id) as journal:
                state = replay(MemoryProjection(), journal, at=seq)
        except (JournalError, StoreError):
            return None
        return [
            {
                "path": file.path,
                "size": file.size,
                "read_only": file.read_only,
                "first_line": file.text.split("\n", 1)[0][:FIRST_LINE_CHARS],
            }
            for file in sorted(state.files.values(), key=lambda f: f.path)[:SHOWN_MEMORY_FILES]
        ]
