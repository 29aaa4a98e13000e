"""A folder import's checked journals, held on disk until every session of the folder is checked.

A folder import checks every journal before it writes one (nothing is written if any session fails),
and a home holds thousands of sessions: kept in memory, their records grew the import's memory with the
folder. Each journal is staged (every rule checked, every record sealed) as its session is read, then
its sealed lines go to an anonymous temporary file and its records are dropped; the images found
(stored as blobs) go there too. The write reads each journal back, one at a time, as the same sealed
records (the store seals them again to the same bytes), so memory holds one session at a time whatever
the folder's size, and the bytes written equal those of the import that held everything.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import IO

import attrs

from waybook.codecs import decode_record
from waybook.journal import InMemoryJournal
from waybook.model import Head, Record


@attrs.frozen
class SpooledJournal:
    """One checked journal in the spool: its sealed lines at `offset`, `size` bytes, and its head."""

    file: IO[bytes] = attrs.field(repr=False)
    offset: int
    size: int
    last: Head

    def head(self) -> Head:
        return self.last

    def read(self, after: int = 0) -> Iterator[Record]:
        """The journal's records after seq `after`, decoded from the spool."""
        for line in self.read_lines(after):
            yield decode_record(line, where="the import's spool")

    def read_lines(self, after: int = 0) -> Iterator[bytes]:
        """The journal's sealed lines after seq `after`, as the spool holds them."""
        data = os.pread(self.file.fileno(), self.size, self.offset)
        return iter(data.splitlines()[after:])


class SpooledBlobs(Mapping[str, tuple[bytes, str]]):
    """The blobs a folder import found (images), by digest, their bytes in the spool."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._places: dict[str, tuple[int, int, str]] = {}

    def __getitem__(self, digest: str) -> tuple[bytes, str]:
        offset, size, media_type = self._places[digest]
        return os.pread(self._file.fileno(), size, offset), media_type

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def add(self, digest: str, data: bytes, media_type: str) -> None:
        if digest not in self._places:
            self._places[digest] = (_append(self._file, data), len(data), media_type)


class Spool:
    """The checked journals of one import, in an anonymous file that is gone when it is closed."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.journals: list[tuple[str, SpooledJournal]] = []
        self.blobs = SpooledBlobs(file)

    def add(self, target: str, staging: InMemoryJournal) -> SpooledJournal:
        """Keep `staging`'s sealed lines; the caller drops the journal."""
        data = b"".join(line + b"\n" for line in staging.read_lines())
        spooled = SpooledJournal(self._file, _append(self._file, data), len(data), staging.head())
        self.journals.append((target, spooled))
        return spooled


def _append(file: IO[bytes], data: bytes) -> int:
    """Write `data` at the end of `file`; where it starts."""
    offset = file.seek(0, os.SEEK_END)
    file.write(data)
    file.flush()
    return offset
