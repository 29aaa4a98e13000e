"""`JournalTable`: a catalog fold's journals by id, those a snapshot restored kept as their encoded rows.

A store of 100,000 journals that opens from its snapshot makes a `JournalInfo` only for the journals a
caller asks about (a page of a listing, the journal it opens), not one per journal on every open.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import msgspec

from waybook.model import StorageError
from waybook.stores._values import JournalInfo

JournalRow = tuple[str, dict[str, Any], int, str, bool]
"""A journal as a snapshot keeps it: role, metadata, creation seq, creation time, hidden."""

_ROW = msgspec.json.Decoder(JournalRow)


def row_of(info: JournalInfo) -> JournalRow:
    return (info.role, info.metadata, info.created, info.created_at, info.hidden)


class JournalTable:
    """A dict of `JournalInfo` by journal id (the operations a fold uses), some entries still rows.

    Safe across threads as a dict is (a store reads it without its catalog mutex): an entry decoded
    from its row stays in `_rows` too (so a reader never finds it in neither), and changes and decodes
    take `_mutex` (so a purge never meets a decode that puts the journal back)."""

    def __init__(self) -> None:
        self._made: dict[str, JournalInfo] = {}
        self._rows: dict[str, msgspec.Raw] = {}
        self._where = ""
        self._mutex = threading.Lock()

    @classmethod
    def of_rows(cls, ids: Iterable[str], rows: Iterable[msgspec.Raw], *, where: str) -> JournalTable:
        """The journals of a snapshot (`where` names it in the error a damaged row raises)."""
        table = cls()
        table._rows = dict(zip(ids, rows, strict=True))
        table._where = where
        return table

    def __len__(self) -> int:
        return len(self._rows) + sum(1 for journal_id in self._made if journal_id not in self._rows)

    def __contains__(self, journal_id: object) -> bool:
        return journal_id in self._made or journal_id in self._rows

    def get(self, journal_id: str) -> JournalInfo | None:
        info = self._made.get(journal_id)
        if info is not None:
            return info
        if journal_id not in self._rows:
            return self._made.get(journal_id)  # (a writer sets the entry before it drops the row)
        with self._mutex:
            info = self._made.get(journal_id)
            raw = self._rows.get(journal_id)
            if info is None and raw is not None:
                info = self._made[journal_id] = self._decoded(journal_id, raw)
            return info

    def __getitem__(self, journal_id: str) -> JournalInfo:
        info = self.get(journal_id)
        if info is None:
            raise KeyError(journal_id)
        return info

    def __setitem__(self, journal_id: str, info: JournalInfo) -> None:
        with self._mutex:
            self._made[journal_id] = info  # (before the row goes: a reader finds one or the other)
            self._rows.pop(journal_id, None)

    def pop(self, journal_id: str) -> JournalInfo | None:
        info = self.get(journal_id)
        with self._mutex:
            self._made.pop(journal_id, None)
            self._rows.pop(journal_id, None)
        return info

    def row(self, journal_id: str) -> msgspec.Raw | JournalRow:
        """The journal's row for the next snapshot (its encoded row when it was never decoded)."""
        raw = self._rows.get(journal_id)
        return raw if raw is not None else row_of(self._made[journal_id])

    def _decoded(self, journal_id: str, raw: msgspec.Raw) -> JournalInfo:
        try:
            role, metadata, created, created_at, hidden = _ROW.decode(raw)
        except msgspec.DecodeError as exc:
            msg = (
                f"{self._where}: its row for journal {journal_id!r} does not decode ({exc}); delete the "
                "snapshot file: the next open folds the catalog in full and writes a sound one"
            )
            raise StorageError(msg) from exc
        return JournalInfo(journal_id, role, metadata, created, created_at, hidden)
