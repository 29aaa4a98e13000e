"""Batches on disk: a reader tells a whole multi-record batch from one that a crash cut short.

A record appended alone carries no `batch` field (its bytes are those of every earlier waybook). Record
`i` of a batch of `n >= 2` records carries `"batch":[i,n]`, inside the bytes its digest covers, so every
store that keeps record bytes verbatim keeps it too. A batch's records are consecutive. A history is
whole when each batch that opens (`i == 1`) runs on to `i == n` before any other record follows. A file
that ends inside a batch ends in a cut batch: readers see the records before it and none of it, and
repair quarantines all of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Final

from waybook.model import BrokenBatchError, Record

CLOSED: Final = (0, 0)
"""The batch state between batches: `(index of the last record read, size)` of the open batch."""

_PLACE: Final = attrgetter("batch")


def whole_batches(
    records: Sequence[Record], state: tuple[int, int] = CLOSED, journal: str = ""
) -> tuple[int, tuple[int, int]]:
    """How many leading `records` end on a batch boundary, and the batch state after all of them.

    `state` is the batch state before `records` (from the previous call). Raises BrokenBatchError when
    a record does not continue the open batch or claims a place in a batch that never opened; its
    `seq` is where the damage starts (the open batch's first record, if one is open). O(len(records)),
    one C pass when no record is part of a batch.
    """
    if state == CLOSED and not any(map(_PLACE, records)):  # a place is a non-empty tuple, or None
        return len(records), CLOSED
    places = list(map(_PLACE, records))
    index, size = state
    whole = 0
    for position, place in enumerate(places):
        seq = records[position].seq
        if index:
            if place != (index + 1, size):
                first = seq - index
                reason = (
                    f"the batch of {size} records from seq {first} stops after {index} of them: seq {seq} "
                    f"{_describe(place)}"
                )
                raise BrokenBatchError(journal=journal, seq=first, reason=reason, record_seq=seq)
            index += 1
            if index == size:
                index = size = 0
                whole = position + 1
        elif place is None:
            whole = position + 1
        elif place[0] == 1 and place[1] >= 2:
            index, size = place
        else:
            reason = f"seq {seq} {_describe(place)}, but no batch is open"
            raise BrokenBatchError(journal=journal, seq=seq, reason=reason)
    return whole, (index, size)


def _describe(place: tuple[int, int] | None) -> str:
    if place is None:
        return "was appended alone"
    return f"says it is record {place[0]} of a batch of {place[1]}"


def cut_batch_reason(first_seq: int, state: tuple[int, int]) -> str:
    """Why records left in an open batch at the end of a history are not committed."""
    index, size = state
    return (
        f"the last batch (seq {first_seq} onwards) is cut short: {index} of its {size} records were "
        "written (a crash or failed write mid-batch); none of it is committed"
    )
