"""Streaming verification of JSONL journal bytes, and the torn-tail / corruption verdict.

`scan` reads a byte range in chunks (never the whole file), proves every complete line against the
chain, the batch structure and the session rules, records each line's offset, and stops at the first
bad line. Its verdict on that line:

- torn tail: the bad bytes are the file's final record or final batch (a partial line, a missing
  newline, undecodable bytes, a zero-filled tail, a chain broken only at the last line, or a
  multi-record batch cut short). The prefix is intact; none of a cut batch is committed.
- corruption: something that is not the final record is bad, so later records cannot be trusted.

Linear in the file's size, however long a line is: each byte is read once, except the bytes of a line
longer than a chunk, which are read once more as a whole when its newline arrives (a torn final line,
which never gets one, is never held in memory). A line longer than MAX_LINE_BYTES is never held: it is
damage at its seq (torn if nothing but zero bytes follows it), so memory stays bounded for any line.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from io import BytesIO
from itertools import accumulate

import attrs

from waybook.codecs import MAX_LINE_BYTES
from waybook.journal._batches import CLOSED, cut_batch_reason, whole_batches
from waybook.journal._jsonl._checkpoint import Hasher
from waybook.journal._jsonl._chunk_proof import prove_chunk
from waybook.journal._ledger import Ledger
from waybook.journal._protocol import Damage
from waybook.model import BrokenBatchError, Head, JournalError, Record

CHUNK = 1 << 20
PROOF_CHUNK = 1 << 17
"""How many bytes a proof reads at once: small enough that a chunk's lines, their records and their
hashes stay in the CPU's caches (bench/speed.py measures it; 1 MiB chunks prove about a fifth slower)."""

ReadAt = Callable[[int, int], bytes]
"""`(size, offset) -> bytes`: a pread on the journal file."""


def read_exactly(read_at: ReadAt, offset: int, size: int) -> bytes:
    """Bytes [offset, offset + size), fewer only if the file ends first; one allocation for the result."""
    parts: list[bytes] = []
    done = 0
    while done < size:
        chunk = read_at(size - done, offset + done)
        if not chunk:
            break
        parts.append(chunk)
        done += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class LineChunks:
    """The complete lines of [start, end) in chunks, as `(offset of the first line, lines, joined)`.

    Each line keeps its newline (`io.BytesIO.readlines` finds them with `memchr`, where `bytes.split`
    walks every byte); `joined` is the same bytes as one buffer, not copied again. After iteration,
    `tail` is where the trailing incomplete line starts (`end` if there is none) and `tail_zeros`
    whether it holds only zero bytes. Given `hasher`, the bytes of every complete line are fed to it as
    they are yielded (each line and its newline, in order).
    """

    def __init__(self, read_at: ReadAt, start: int, end: int, hasher: Hasher | None = None) -> None:
        self._read_at = read_at
        self._hasher = hasher
        self._start = start
        self._end = end
        self.tail = start
        self.tail_zeros = True
        self.overlong: tuple[int, int] | None = None
        """`(start, end)` of a complete line longer than MAX_LINE_BYTES, where iteration stopped (it is
        never read whole: a record's line is never that long, so it cannot prove)."""

    def __iter__(self) -> Iterator[tuple[int, list[bytes], memoryview]]:
        read_at, end = self._read_at, self._end
        pos = read_pos = self._start  # pos: where the current (incomplete) line starts
        kept: bytes | None = b""  # bytes [pos, read_pos) while they fit in about a chunk, else None
        zeros = True
        while read_pos < end:
            chunk = read_at(min(PROOF_CHUNK, end - read_pos), read_pos)
            if not chunk:
                break
            chunk_start = read_pos
            read_pos += len(chunk)
            if kept is None or chunk.find(b"\n") < 0:  # no line ends here, or a long line goes on
                last = chunk.rfind(b"\n")
                if last < 0:
                    zeros = zeros and chunk.count(0) == len(chunk)
                    kept = kept + chunk if kept is not None and len(kept) < PROOF_CHUNK else None
                    continue
                line_end = chunk_start + chunk.find(b"\n") + 1
                if line_end - pos > MAX_LINE_BYTES:  # refused without ever being held
                    self.overlong = (pos, line_end)
                    self.tail = pos
                    return
                # a long line ends here: read it once as a whole, now that it is complete
                data = read_exactly(read_at, pos, chunk_start - pos) + chunk
            else:
                data = kept + chunk if kept else chunk
            lines = BytesIO(data).readlines()
            kept = b"" if lines[-1].endswith(b"\n") else lines.pop()
            complete = len(data) - len(kept)
            joined = memoryview(data)[:complete]
            self.tail = pos + complete
            if self._hasher is not None:
                self._hasher.update(joined)
            yield pos, lines, joined
            pos += complete
            if kept and read_pos < end:  # a line goes on: read it again with the next chunk, not copied
                read_pos, kept = pos, b""
            zeros = kept.count(0) == len(kept)
        self.tail = pos
        self.tail_zeros = zeros


def scan(
    read_at: ReadAt,
    *,
    start: int,
    end: int,
    ledger: Ledger,
    offsets: array[int],
    journal: str,
    keep: list[Record] | None = None,
    hasher: Hasher | None = None,
) -> tuple[int, Damage | None]:
    """Verify lines in [start, end) following `ledger.head`; returns (end of the committed prefix, damage).

    Lines that prove advance `ledger` (chain, batches and rules) and append their start offsets to
    `offsets`; the records of a batch join the ledger only once its last record has been read. `start`
    must be on a batch boundary (the end of what `ledger` holds). Records the ledger takes are also
    appended to `keep` if given (so a caller that wants them need not decode them again). `hasher`, if
    given, is fed the bytes of the lines read; it covers exactly [start, returned end) only when no
    damage is returned.
    """
    chunks = LineChunks(read_at, start, end, hasher)
    pending: list[Record] = []  # proved records of a batch not yet closed: not committed
    state = CLOSED
    chain = ledger.head
    for pos, lines, joined in chunks:
        good, error = prove_chunk(lines, joined, chain, journal)
        starts = list(accumulate(map(len, lines), initial=pos))  # one past the last line's start too
        del starts[len(good) :]
        offsets.fromlist(starts)  # (from a list in one C call; extend takes an iterator item by item)
        if good:
            chain = Head.of(good[-1])
        broken: BrokenBatchError | None = None
        try:
            whole, state = whole_batches(good, state, journal)
        except BrokenBatchError as exc:
            broken = exc
            run = pending + good
            commit, pending = run[: exc.seq - 1 - ledger.head.seq], []
        else:
            if whole == len(good) and not pending:
                commit = good  # the common case: every record appended alone, or whole batches
            elif whole:
                commit, pending = pending + good[:whole], good[whole:]
            else:
                commit = []
                pending.extend(good)
        rule_break = _advance(ledger, commit, journal, keep)
        if rule_break is not None:
            seq, reason = rule_break
            bad_end = offsets_end(offsets[seq - 1], read_at, end)
            return _found(_damage(ledger, offsets, reason, bad_end, read_at, end, bad_record=seq))
        if broken is not None:
            bad_end = offsets_end(offsets[broken.record_seq - 1], read_at, end)
            damage = _damage(
                ledger, offsets, broken.reason, bad_end, read_at, end, bad_record=broken.record_seq
            )
            return _found(damage)
        if error is not None:
            bad_start = offsets[-1] + len(lines[len(good) - 1]) if good else pos
            bad_end = bad_start + len(lines[len(good)])
            bad_record = chain.seq + 1  # the line after the last that proved
            damage = _damage(ledger, offsets, _reason(error), bad_end, read_at, end, bad_start, bad_record)
            return _found(damage)
    if chunks.overlong is not None:
        bad_start, bad_end = chunks.overlong
        reason = (
            f"its line is {bad_end - bad_start:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit of a journal "
            "line (no waybook writer writes one; it was not decoded)"
        )
        damage = _damage(ledger, offsets, reason, bad_end, read_at, end, bad_start, chain.seq + 1)
        return _found(damage)
    if pending:
        reason = cut_batch_reason(pending[0].seq, state)
        damage = _damage(ledger, offsets, reason, end, read_at, end)
        return damage.offset, attrs.evolve(damage, torn=True)
    if chunks.tail < end:
        pos = chunks.tail
        seq = ledger.head.seq + 1
        reason = "the last line has no newline (a partial write)"
        if chunks.tail_zeros:
            reason = "the file ends in zero bytes (a zero-filled tail)"
        return pos, Damage(torn=True, offset=pos, seq=seq, reason=reason, bad_bytes=end - pos)
    return chunks.tail, None


def _found(damage: Damage) -> tuple[int, Damage]:
    return damage.offset, damage


def _advance(
    ledger: Ledger, records: list[Record], journal: str, keep: list[Record] | None
) -> tuple[int, str] | None:
    """Take whole batches into the ledger; on a broken session rule, (its seq, why), keeping those before."""
    try:
        ledger.advance(records)
    except JournalError:
        for record in records:
            if record.seq <= ledger.head.seq:  # taken before the rule broke (the header)
                if keep is not None:
                    keep.append(record)
                continue
            try:
                ledger.advance((record,))
            except JournalError as exc:
                return record.seq, _reason(exc)
            if keep is not None:
                keep.append(record)
        msg = f"{journal}: a rule check failed on a batch but on none of its records"
        raise AssertionError(msg) from None
    if keep is not None:
        keep.extend(records)
    return None


def _damage(
    ledger: Ledger,
    offsets: array[int],
    reason: str,
    bad_end: int,
    read_at: ReadAt,
    end: int,
    bad_start: int | None = None,
    bad_record: int | None = None,
) -> Damage:
    """Damage from the first record the ledger does not hold; torn if only zero bytes follow `bad_end`.

    Drops the offsets of records proved but not committed (those of a cut batch).
    """
    committed = ledger.head.seq
    offset = offsets[committed] if len(offsets) > committed else bad_start
    assert offset is not None
    del offsets[committed:]
    torn = _only_zeros(read_at, bad_end, end)
    seq = committed + 1
    return Damage(
        torn=torn,
        offset=offset,
        seq=seq,
        reason=reason,
        bad_bytes=end - offset,
        bad_record=bad_record if bad_record != seq else None,
    )


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


def _only_zeros(read_at: ReadAt, start: int, end: int) -> bool:
    pos = start
    while pos < end:
        chunk = read_at(min(CHUNK, end - pos), pos)
        if not chunk:
            break
        if chunk.count(0) != len(chunk):
            return False
        pos += len(chunk)
    return True


def _reason(exc: JournalError) -> str:
    return str(getattr(exc, "reason", None) or exc)
