"""Proving a chunk of a JSONL journal's lines in a few C passes: the hot loop of every full-proof open.

`prove_chunk` takes complete lines as `io.BytesIO.readlines` gives them (each with its newline; a
`memchr` per line, where `bytes.split` walks every byte) and the same bytes as one buffer. When every
line starts a record, the buffer is decoded in one C call (record i is line i) and the chain is proved
column by column: the seqs, the prevs, and the digests against SHA-256 of each line's covered bytes,
each compared as one list (a sealed record's line is proved the same way; an erased one's digest is
finished from its content's state, docs/erasure.md). Anything else goes line by line through
`prove_lines`, which upcasts old versions and names the first bad line exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import repeat
from operator import add, attrgetter, getitem
from typing import Final

from waybook.codecs import decode_record_lines, erased_line_digest
from waybook.journal._ledger import prove_lines
from waybook.model import Head, JournalError, Record

_SEQ: Final = attrgetter("seq")
_PREV: Final = attrgetter("prev")
_DIGEST: Final = attrgetter("digest")
_SHA256: Final = hashlib.sha256
_HEXDIGEST: Final = type(hashlib.sha256()).hexdigest
_COVERED: Final = slice(None, -(len(b',"digest":"') + 64 + len(b'"}\n')))
"""A line (with its newline) without its digest member and the two bytes after it: the covered bytes
but their closing brace. Hashing them and `}` also proves `digest` is the last field: if it is not,
the slice holds other bytes and the hash cannot match."""
_CLOSE: Final = b"}"
_LINE_START: Final = b'{"'  # a record's line (plain, sealed or erased) starts with an object's first key
_AFTER_LINE_START: Final = b"{#"  # the least bytes greater than every line starting with _LINE_START
_FEW: Final = 4


def prove_chunk(
    lines: Sequence[bytes], joined: bytes | memoryview, start: Head, journal: str = ""
) -> tuple[list[Record], JournalError | None]:
    """Decode and prove consecutive `lines` (each ending in a newline; `joined` is the same bytes in one
    buffer) after `start`: the records of the good prefix, and the error at the first bad line."""
    count = len(lines)
    # Every line starts so exactly when the least and the greatest of them do (two C passes); then no
    # line is blank or holds two values, and decode_lines gives one record per line. A few lines (the
    # tail after a checkpoint) are proved faster one by one than by building the columns.
    if count >= _FEW and min(lines) >= _LINE_START and max(lines) < _AFTER_LINE_START:
        records = decode_record_lines(joined)
        if records is not None and len(records) == count:
            seq, prev = start.seq, start.digest
            digests = list(map(_DIGEST, records))
            covered = map(add, map(getitem, lines, repeat(_COVERED)), repeat(_CLOSE))
            if list(map(_SEQ, records)) == list(range(seq + 1, seq + 1 + count)) and list(
                map(_PREV, records)
            ) == [prev, *digests[:-1]]:
                hashes = list(map(_HEXDIGEST, map(_SHA256, covered)))
                if hashes == digests or _only_erased_differ(lines, records, hashes, digests):
                    return records, None
    return prove_lines([line[:-1] for line in lines], start, journal)


def _only_erased_differ(
    lines: Sequence[bytes], records: list[Record], hashes: list[str], digests: list[str]
) -> bool:
    """Whether every line whose hash is not its digest is an erased record whose digest, finished from
    its content's state over the bytes that stay, is (docs/erasure.md)."""
    for line, record, hashed, digest in zip(lines, records, hashes, digests, strict=True):
        if hashed != digest and (record.erased is None or erased_line_digest(line[:-1], record) != digest):
            return False
    return True
