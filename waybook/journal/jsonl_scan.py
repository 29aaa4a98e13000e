"""Streaming verification of JSONL journal bytes, and the torn-tail / corruption verdict.

`scan` reads a byte range in chunks (never the whole file), proves every complete line against the
chain and the session rules, records each line's offset, and stops at the first bad line. Its verdict
on that line:

- torn tail: the bad bytes are the file's final record (a partial line, a missing newline, undecodable
  bytes, a zero-filled tail, or a chain broken only at the last line). The prefix is intact.
- corruption: something that is not the final record is bad, so later records cannot be trusted.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import accumulate
from operator import add

import attrs

from waybook.journal.errors import JournalError
from waybook.journal.ledger import Ledger, prove_lines
from waybook.journal.records import Record

CHUNK = 1 << 20

ReadAt = Callable[[int, int], bytes]
"""`(size, offset) -> bytes`: a pread on the journal file."""


@attrs.frozen
class Damage:
    """The first bad bytes of a journal file."""

    torn: bool
    offset: int
    seq: int
    reason: str
    bad_bytes: int


def scan(
    read_at: ReadAt,
    *,
    start: int,
    end: int,
    ledger: Ledger,
    offsets: array[int],
    journal: str,
    keep: list[Record] | None = None,
) -> tuple[int, Damage | None]:
    """Verify lines in [start, end) following `ledger.head`; returns (end of last good line, damage).

    Good lines advance `ledger` (chain and rules) and append their start offsets to `offsets`; their
    records are appended to `keep` if given (so a caller that wants them need not decode them again).
    """
    pos = start
    carry = b""
    read_pos = start
    while read_pos < end:
        chunk = read_at(min(CHUNK, end - read_pos), read_pos)
        if not chunk:
            break
        read_pos += len(chunk)
        data = carry + chunk if carry else chunk
        lines = data.split(b"\n")
        carry = lines.pop()
        damage = _check_lines(lines, pos, ledger, offsets, journal, read_at, end, keep)
        if damage is not None:
            return damage.offset, damage
        pos += len(data) - len(carry)
    if carry:
        seq = ledger.head.seq + 1
        reason = "the last line has no newline (a partial write)"
        if not carry.strip(b"\x00"):
            reason = "the file ends in zero bytes (a zero-filled tail)"
        return pos, Damage(torn=True, offset=pos, seq=seq, reason=reason, bad_bytes=end - pos)
    return pos, None


def _check_lines(
    lines: list[bytes],
    pos: int,
    ledger: Ledger,
    offsets: array[int],
    journal: str,
    read_at: ReadAt,
    end: int,
    keep: list[Record] | None,
) -> Damage | None:
    good, error = prove_lines(lines, ledger.head, journal)
    # Line i starts at pos + (lengths of the lines before it) + i newlines, summed in C.
    offsets.extend(map(add, accumulate(map(len, lines[: len(good)]), initial=pos), range(len(good))))
    if good:
        pos = offsets[-1] + len(lines[len(good) - 1]) + 1
    try:
        ledger.advance(good)
    except JournalError:
        return _locate_rule_break(good, offsets, ledger, journal, read_at, end, keep)
    if keep is not None:
        keep.extend(good)
    if error is not None:
        return _verdict(pos, ledger.head.seq + 1, _reason(error), len(lines[len(good)]), read_at, end)
    return None


def _locate_rule_break(
    good: list[Record],
    offsets: array[int],
    ledger: Ledger,
    journal: str,
    read_at: ReadAt,
    end: int,
    keep: list[Record] | None,
) -> Damage:
    """A chunk broke a session rule: find the first record that did, and keep those before it."""
    first = len(offsets) - len(good)
    for index, record in enumerate(good):
        try:
            ledger.advance((record,))
        except JournalError as exc:
            offset = offsets[first + index]
            del offsets[first + index :]
            length = offsets_end(offset, read_at, end) - offset
            return _verdict(offset, record.seq, _reason(exc), length, read_at, end)
        if keep is not None:
            keep.append(record)
    msg = f"{journal}: a rule check failed on a batch but on none of its records"
    raise AssertionError(msg)


def offsets_end(offset: int, read_at: ReadAt, end: int) -> int:
    """The offset just past the newline of the line starting at `offset` (or `end`)."""
    pos = offset
    while pos < end:
        chunk = read_at(min(CHUNK, end - pos), pos)
        if not chunk:
            return end
        newline = chunk.find(b"\n")
        if newline >= 0:
            return pos + newline + 1
        pos += len(chunk)
    return end


def _verdict(offset: int, seq: int, reason: str, line_length: int, read_at: ReadAt, end: int) -> Damage:
    """Torn if nothing but zero bytes follows the bad line; corrupt otherwise."""
    after = offset + line_length + 1
    torn = _only_zeros(read_at, after, end)
    return Damage(torn=torn, offset=offset, seq=seq, reason=reason, bad_bytes=end - offset)


def _only_zeros(read_at: ReadAt, start: int, end: int) -> bool:
    pos = start
    while pos < end:
        chunk = read_at(min(CHUNK, end - pos), pos)
        if not chunk:
            break
        if chunk.strip(b"\x00"):
            return False
        pos += len(chunk)
    return True


def _reason(exc: JournalError) -> str:
    return str(getattr(exc, "reason", None) or exc)
