"""Fast reopen: a sidecar checkpoint of what an open proved, so the next open decodes only the tail.

`PATH.checkpoint` holds, for a prefix of the journal that was proved: its end byte, the SHA-256 of its
bytes [0, end), its head (seq and digest), each record's start offset, and the rule state (every id and
whether it is a node, the leaf). It is a cache, never a source of truth:

- it is used only if it decodes, its checksum holds, its numbers agree with each other, and the journal's
  own bytes agree with it: by default every byte of the prefix must hash to the recorded SHA-256 (one
  streaming pass, no decoding: what was proved is exactly what is there), and in every case the line at
  the recorded last offset must end exactly at the recorded end, decode as the recorded seq, carry the
  recorded digest, and hash to it. `prove_prefix=False` (JsonlJournal's `trust_checkpoint=True`) skips
  the prefix hash and checks only that last line and the header;
- anything else (missing, stale, damaged, from another file) means a full proof of the file, after which
  a writer saves a fresh checkpoint;
- it only ever vouches for a prefix: whatever the file holds past its end is proved on open as usual.

The prefix SHA-256 is the digest of exactly the bytes the writer proved (an open's scan) or wrote (its
appends), computed as they passed, never read back later: a byte changed after it was proved cannot be
vouched for by a later save. Saving is atomic (a temp file renamed over the old one) and never fsynced:
losing it costs one full proof. Not checkpointed (proved in full on open): journals whose header gives
them a role with rules of its own (memory, pins), whose state the checkpoint does not hold.

A journal past 65,536 records keeps its ids in the compact index, which holds no id strings; its
checkpoint holds them as text all the same (`SavedIds`), taken from what the writer has in hand: the
ids its open scanned, saved at the end of that open, and later the text of the checkpoint it saved or
loaded (`saved_ids`, re-read and accepted only if it is exactly that one) and the ids committed since.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from array import array
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Protocol

import msgspec

from waybook._files import FILE_MODE
from waybook.codecs import decode_record, line_digest
from waybook.model import DecodeError, Head, Header

SUFFIX: Final = ".checkpoint"
_MAGIC: Final = b"waybook.checkpoint/2\n"  # /1 had no prefix digest: ignored (a full proof)
_DIGEST_BYTES: Final = 64


class _Payload(msgspec.Struct, frozen=True, array_like=True):
    byteorder: str
    end: int
    seq: int
    digest: str
    offsets: bytes  # array("Q") in `byteorder`
    ids: str  # every id in commit order from seq 1, joined by newlines (an id never holds one)
    not_nodes: list[int]  # the (few) seqs whose records are not nodes: header, leaf moves, resets
    leaf: str | None
    prefix_sha256: str  # SHA-256 of the journal's bytes [0, end)


class SavedIds(msgspec.Struct, frozen=True, gc=False):
    """A checkpoint's rule state of ids as it is saved: every id in commit order from seq 1, joined by
    newlines, and the seqs of the records that are not nodes."""

    text: str
    not_nodes: list[int]

    @classmethod
    def of(cls, ids: Mapping[str, bool]) -> SavedIds:
        """The saved form of a dict index's ids (id -> is_node, in commit order)."""
        return cls("\n".join(ids), [seq for seq, node in enumerate(ids.values(), start=1) if not node])

    def then(self, ids: list[str], not_nodes: list[int]) -> SavedIds:
        """These ids followed by `ids` (the next seqs, with `not_nodes` among them)."""
        if not ids:
            return self
        if not self.text:
            return SavedIds("\n".join(ids), not_nodes)
        return SavedIds(self.text + "\n" + "\n".join(ids), self.not_nodes + not_nodes)


NO_IDS: Final = SavedIds("", [])
"""Before seq 1: no checkpoint to continue."""


class Mark(msgspec.Struct, frozen=True, gc=False):
    """Which checkpoint an object saved or loaded: its end byte, head seq and prefix SHA-256."""

    end: int
    seq: int
    prefix_sha256: str


class Hasher(Protocol):
    """A running SHA-256 (hashlib.sha256()): of the journal's bytes [0, end) as they were proved."""

    def update(self, data: bytes | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


_ENCODER: Final = msgspec.msgpack.Encoder()
_DECODER: Final = msgspec.msgpack.Decoder(_Payload)


class Checkpoint(msgspec.Struct, frozen=True):
    """A proved prefix: bytes [0, end), records 1..head.seq starting at `offsets`, and its rule state."""

    end: int
    head: Head
    offsets: array[int]
    ids: dict[str, bool]
    leaf: str | None
    header: Header
    prefix: Hasher | None
    """The SHA-256 of bytes [0, end), fed every byte: continued by the journal (None: not proved)."""
    saved: SavedIds
    """`ids` as they were saved: what a later save of a longer prefix starts from."""
    mark: Mark


def checkpoint_path(journal: Path) -> Path:
    return Path(os.fspath(journal) + SUFFIX)


def load(
    journal: Path, *, size: int, read_at: Callable[[int, int], bytes], prove_prefix: bool = True
) -> Checkpoint | None:
    """The journal's checkpoint if it holds for the journal's bytes now (`size` long), else None.

    With `prove_prefix` (the default) every byte it vouches for is hashed and must match; without it,
    only the last line and the header are read (the trusting fast path)."""
    payload = _read(journal)
    if payload is None:
        return None
    checked = _check(payload, size, read_at)
    if checked is None or not prove_prefix:
        return checked
    prefix = _prefix_hash(read_at, payload.end)
    if prefix is None or prefix.hexdigest() != payload.prefix_sha256:
        return None  # a byte of the proved prefix changed (or the file is another one): prove it all
    return msgspec.structs.replace(checked, prefix=prefix)


def saved_ids(journal: Path, mark: Mark) -> SavedIds | None:
    """The ids of the journal's checkpoint if it is still exactly the one `mark` names (same end, seq
    and prefix SHA-256, checksum holding), else None: a writer continues only its own checkpoint."""
    payload = _read(journal)
    if (
        payload is None
        or Mark(payload.end, payload.seq, payload.prefix_sha256) != mark
        or payload.ids.count("\n") != payload.seq - 1
    ):
        return None
    return SavedIds(payload.ids, payload.not_nodes)


def _read(journal: Path) -> _Payload | None:
    """The checkpoint beside `journal` if it reads, its checksum holds and it decodes, else None."""
    try:
        fd = os.open(os.fspath(journal) + SUFFIX, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    except OSError:
        return None
    finally:
        os.close(fd)
    head_len = len(_MAGIC) + _DIGEST_BYTES
    if (
        not data.startswith(_MAGIC)
        or hashlib.sha256(data[head_len:]).hexdigest().encode() != data[len(_MAGIC) : head_len]
    ):
        return None
    try:
        return _DECODER.decode(data[head_len:])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _prefix_hash(read_at: Callable[[int, int], bytes], end: int) -> Hasher | None:
    """The SHA-256 of bytes [0, end), streamed a chunk at a time; None if the file ends first."""
    hasher = hashlib.sha256()
    pos = 0
    while pos < end:
        chunk = read_at(min(_HASH_CHUNK, end - pos), pos)
        if not chunk:
            return None
        hasher.update(chunk)
        pos += len(chunk)
    return hasher


_HASH_CHUNK: Final = 1 << 20


def _check(payload: _Payload, size: int, read_at: Callable[[int, int], bytes]) -> Checkpoint | None:
    seq, end = payload.seq, payload.end
    if payload.byteorder != sys.byteorder or len(payload.offsets) != 8 * seq or seq < 1 or end > size:
        return None
    names = payload.ids.split("\n")
    not_nodes = payload.not_nodes
    if not_nodes and (min(not_nodes) < 1 or max(not_nodes) > len(names)):
        return None  # a seq no record has (0 would name the last id): not a checkpoint we wrote
    ids = dict.fromkeys(names, True)
    for not_node in not_nodes:
        ids[names[not_node - 1]] = False
    offsets = array("Q")
    offsets.frombytes(payload.offsets)
    starts = offsets.tolist()
    if (
        len(ids) != seq
        or starts[0] != 0
        or starts[-1] >= end
        or starts != sorted(starts)  # one pass in C on sorted input
        or len(set(starts)) != seq  # and no two the same: strictly increasing
        or (payload.leaf is not None and not ids.get(payload.leaf, False))
    ):
        return None
    # Never trusted past the journal's own bytes: the head line must be where and what it says.
    line = read_at(end - starts[-1], starts[-1])
    if len(line) != end - starts[-1] or line.find(b"\n") != len(line) - 1:
        return None
    try:
        record = decode_record(line[:-1])
    except DecodeError:
        return None
    if record.seq != seq or record.digest != payload.digest or line_digest(line[:-1]) != payload.digest:
        return None
    # The header says which rules the journal keeps beyond the session rules (its role).
    first = record if seq == 1 else None
    if first is None:
        header_line = read_at(starts[1], 0)
        try:
            first = decode_record(header_line[:-1]) if header_line.endswith(b"\n") else None
        except DecodeError:
            return None
    if first is None or first.seq != 1 or not isinstance(first.body, Header):
        return None
    saved = SavedIds(payload.ids, payload.not_nodes)
    mark = Mark(end, seq, payload.prefix_sha256)
    head = Head(seq, payload.digest)
    return Checkpoint(end, head, offsets, ids, payload.leaf, first.body, None, saved, mark)


def save(
    journal: Path,
    *,
    end: int,
    head: Head,
    offsets: array[int],
    ids: SavedIds | Mapping[str, bool],
    leaf: str | None,
    prefix_sha256: str,
) -> bool:
    """Write the checkpoint of the proved prefix [0, end) atomically, best effort; True if written.

    `ids` is every id of it in commit order, saved (SavedIds) or as a dict index (id -> is_node);
    `prefix_sha256` is the SHA-256 of the bytes [0, end) as they were proved or written."""
    if head.seq < 1 or len(offsets) != head.seq:
        return False
    if not isinstance(ids, SavedIds):
        ids = SavedIds.of(ids)
    if ids.text.count("\n") != head.seq - 1 or not all(0 < seq <= head.seq for seq in ids.not_nodes):
        return False  # not one id per record (or an id with a newline: only a foreign writer's)
    payload = _Payload(
        byteorder=sys.byteorder,
        end=end,
        seq=head.seq,
        digest=head.digest,
        offsets=offsets.tobytes(),
        ids=ids.text,
        not_nodes=ids.not_nodes,
        leaf=leaf,
        prefix_sha256=prefix_sha256,
    )
    body = _ENCODER.encode(payload)
    data = _MAGIC + hashlib.sha256(body).hexdigest().encode() + body
    target = checkpoint_path(journal)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError:
        return False
    try:
        os.fchmod(fd, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(temp, target)
    except OSError:
        return False
    else:
        return True
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
