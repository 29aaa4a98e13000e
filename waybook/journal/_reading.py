"""Reading chosen records from any journal, by seq, in as few reads as contiguous runs allow."""

from __future__ import annotations

from collections.abc import Iterable

from waybook.journal._protocol import SessionJournal
from waybook.model import IntegrityError, InvalidArgumentError, Record


def check_cursor(journal: str, after: object, limit: object) -> None:
    """Refuse a read cursor of the wrong type (InvalidArgumentError) before anything is read."""
    if type(after) is not int or (limit is not None and type(limit) is not int):
        msg = (
            f"{journal}: read takes after=<int seq> and limit=<int or None>, not after={after!r:.40} "
            f"and limit={limit!r:.40}"
        )
        raise InvalidArgumentError(msg)


def read_seqs(journal: SessionJournal, seqs: Iterable[int]) -> list[Record]:
    """The records at `seqs` (ascending), one `read` per contiguous run."""
    wanted = list(seqs)
    records: list[Record] = []
    start = 0
    while start < len(wanted):
        stop = start + 1
        while stop < len(wanted) and wanted[stop] == wanted[stop - 1] + 1:
            stop += 1
        run = list(journal.read(after=wanted[start] - 1, limit=stop - start))
        if [r.seq for r in run] != wanted[start:stop]:
            msg = f"{journal.name}: records {wanted[start]}..{wanted[stop - 1]} are not in the journal"
            raise IntegrityError(msg)
        records.extend(run)
        start = stop
    return records
