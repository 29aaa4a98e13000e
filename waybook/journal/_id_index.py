"""Which record ids a journal has used, and which of them are nodes: the state of the uniqueness rule.

Two implementations answer the same questions exactly:

- `DictIdIndex` keeps the ids themselves in a dict: every question is one C call, at about 100 bytes
  per record (the id string and its dict slot). Right where the records are held in memory anyway.
- `CompactIdIndex` keeps a 4-byte fingerprint and a 4-byte seq per record, at about 11 bytes per
  record all told, and confirms each fingerprint match by asking the journal for the id committed at
  that seq. Right for a large journal on disk, whose records are not in memory: a million records cost
  about 11 MB instead of 100.

A JSONL journal starts with a dict and moves to the compact index past COMPACT_ABOVE ids
(SessionRules.compact_ids); docs/jsonl.md, "The id index", has the trade-off. A compact index keeps no
id strings, so a JSONL writer that saves checkpoints gives it an `IdLog`: the ids it takes in after the
checkpoint's end, for the checkpoint the writer saves next (docs/jsonl.md, "Reopening fast").
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, islice
from operator import not_
from typing import Final, Protocol

CommittedId = Callable[[int], tuple[str, bool]]
"""`seq -> (id, is_node)` of a committed record: how a compact index confirms a fingerprint match."""


class IdIndex(Protocol):
    """The committed ids of one journal. `in` asks whether an id is used; `node` whether it is a node."""

    def __contains__(self, rid: object, /) -> bool: ...

    def __len__(self) -> int: ...

    def node(self, rid: str) -> bool:
        """True when `rid` is a committed node (a message, compaction, ...), not just any record."""
        ...

    def isdisjoint(self, ids: Iterable[str]) -> bool:
        """True when none of `ids` is committed."""
        ...

    def add(self, ids: Mapping[str, bool], first_seq: int) -> None:
        """Take in newly committed ids (in commit order, id -> is_node); the first is at `first_seq`."""
        ...

    def add_new_nodes(self, ids: Sequence[str], first_seq: int) -> bool:
        """Take in the ids of committed nodes, distinct from each other, if none of them is known yet.

        Returns False, having taken in none of them, when one is already committed: a replay's check
        and update in one pass, for the common run of messages.
        """
        ...

    def nbytes(self) -> int:
        """Memory the index holds, in bytes."""
        ...


class DictIdIndex(dict[str, bool]):
    """An IdIndex as a dict from id to is_node. O(1) per question, in C."""

    def node(self, rid: str) -> bool:
        return self.get(rid, False)

    def isdisjoint(self, ids: Iterable[str]) -> bool:
        return self.keys().isdisjoint(ids)

    def add(self, ids: Mapping[str, bool], first_seq: int) -> None:
        self.update(ids)

    def add_new_nodes(self, ids: Sequence[str] | dict[str, bool], first_seq: int) -> bool:
        """As IdIndex's; `ids` may also be the dict of them, each True (a replay built it already)."""
        if not self.keys().isdisjoint(ids):
            return False
        self.update(ids if type(ids) is dict else dict.fromkeys(ids, True))
        return True

    def nbytes(self) -> int:
        """Memory held by the index, in bytes: the dict and its id strings."""
        return sys.getsizeof(self) + sum(map(sys.getsizeof, self))


_FINGERPRINT: Final = struct.Struct("=I")
_PACK: Final = _FINGERPRINT.pack
_FP_MASK: Final = 0xFFFFFFFF
_SEQ_LIMIT: Final = 1 << 32
_INITIAL_BUCKETS: Final = 64
BUCKET_LOAD: Final = 64
"""Average entries per bucket before one more bucket is split off."""
COMPACT_ABOVE: Final = 1 << 16
"""A journal whose rules may compact their ids does so past this many (SessionRules.compact_ids)."""
RECENT: Final = 1024
"""Ids added one by one wait in a dict until there are this many, then move to the buckets at once."""


class IdLog:
    """The ids taken in from seq `first` on, in commit order, and the seqs among them of records that are
    not nodes: what a checkpoint after `first - 1` needs that a compact index does not keep.

    Ids before `first` are left out (a checkpoint already holds them). Past `limit` ids (None: no limit)
    it drops them and holds none from then on (`ids` is None): a long-lived writer does not keep every
    id after all, and its next open proves the tail instead.
    """

    __slots__ = ("first", "ids", "limit", "not_nodes")

    def __init__(self, first: int, limit: int | None = None) -> None:
        self.first = first
        self.limit = limit
        self.ids: list[str] | None = []
        self.not_nodes: list[int] = []

    def nodes(self, ids: Sequence[str], first_seq: int) -> bool:
        """Take in a run of nodes from `first_seq`; False once the log holds nothing (dropped)."""
        held = self.ids
        if held is None or first_seq != self.first + len(held):
            return self._drop()
        held += ids
        return self.limit is None or len(held) <= self.limit or self._drop()

    def add(self, ids: Mapping[str, bool], first_seq: int) -> bool:
        """Take in ids (id -> is_node) from `first_seq`, leaving out those before `first`."""
        held = self.ids
        skip = self.first - first_seq
        if held is None or (held and first_seq != self.first + len(held)) or (not held and skip < 0):
            return self._drop()
        if skip >= len(ids):
            return True  # all of them before `first` (a restored checkpoint's ids, compacted)
        start = first_seq + max(skip, 0)
        if skip > 0:
            held += islice(ids, skip, None)
            flags = list(islice(ids.values(), skip, None))
        else:
            held += ids
            flags = list(ids.values())
        if not all(flags):
            self.not_nodes += [seq for seq, node in enumerate(flags, start=start) if not node]
        return self.limit is None or len(held) <= self.limit or self._drop()

    def _drop(self) -> bool:
        self.ids = None
        self.not_nodes = []
        return False


if array("I").itemsize != _FINGERPRINT.size:  # pragma: no cover - every platform CPython supports
    msg = "CompactIdIndex needs a 4-byte unsigned int array type"
    raise ImportError(msg)


class CompactIdIndex:
    """An IdIndex of fingerprints in linear-hashing buckets. About 11 bytes per record.

    Each record adds the low 32 bits of its id's hash (the fingerprint) to a bytes bucket chosen by the
    fingerprint's low bits, and its seq at the same position of the bucket's seq array. A lookup finds
    the fingerprint in one bucket with `bytearray.find` (a C scan of about 256 bytes) and confirms each
    match with `committed_id(seq)`, so the answers are exact: a false match (another id with the same
    fingerprint) costs one read, never a wrong answer. Questions about a new id, nearly all of them,
    cost O(1) and no read. Buckets split one at a time (linear hashing), so growing never pauses for a
    rehash of everything.

    Ids added one append at a time first go to a small dict (one C call each) and move to the buckets
    `RECENT` at a time, which halves the cost of adding them one by one; a replay adds whole chunks
    straight to the buckets. `fingerprint` is the hash to use; tests pass a weak one to force collisions.
    Given a `log`, every id taken in is also logged there, until the log drops them.
    """

    def __init__(
        self,
        committed_id: CommittedId,
        *,
        fingerprint: Callable[[str], int] = hash,
        log: IdLog | None = None,
    ) -> None:
        self._committed_id = committed_id
        self._fingerprint = fingerprint
        self.log = log
        """Where the ids taken in also go (IdLog), until it drops them; None: nowhere."""
        self._recent: dict[str, int] = {}  # id -> seq << 1 | is_node, not yet in the buckets
        self._fps: list[bytearray] = [bytearray() for _ in range(_INITIAL_BUCKETS)]
        self._seqs: list[array[int]] = [array("I") for _ in range(_INITIAL_BUCKETS)]
        self._mask = _INITIAL_BUCKETS - 1  # buckets below _split are addressed with one more bit
        self._wide = self._mask << 1 | 1
        self._split = 0
        self._in_buckets = 0
        self._capacity = BUCKET_LOAD * _INITIAL_BUCKETS

    def __len__(self) -> int:
        return self._in_buckets + len(self._recent)

    def __contains__(self, rid: object, /) -> bool:
        if type(rid) is not str:
            return False
        if rid in self._recent:
            return True
        fp = self._fingerprint(rid) & _FP_MASK
        bucket = fp & self._mask
        if bucket < self._split:
            bucket = fp & self._wide
        if self._fps[bucket].find(_PACK(fp)) < 0:
            return False  # a new id, nearly every question: no read
        return self._find(rid) is not None

    def node(self, rid: str) -> bool:
        found = self._find(rid) if type(rid) is str else None
        return found is not None and found[1]

    def seq_of(self, rid: str) -> int | None:
        """The seq of the record with id `rid`, or None."""
        found = self._find(rid) if type(rid) is str else None
        return None if found is None else found[0]

    def isdisjoint(self, ids: Iterable[str]) -> bool:
        find = self._find
        return all(find(rid) is None for rid in ids)

    def add(self, ids: Mapping[str, bool], first_seq: int) -> None:
        recent = self._recent
        seq = first_seq
        for rid, is_node in ids.items():
            recent[rid] = seq << 1 | is_node
            seq += 1
        log = self.log
        if log is not None and not log.add(ids, first_seq):
            self.log = None
        if len(recent) >= RECENT:
            self._settle()

    def add_new_nodes(self, ids: Sequence[str], first_seq: int) -> bool:
        if not self._recent.keys().isdisjoint(ids):
            return False
        if first_seq + len(ids) > _SEQ_LIMIT and self._seqs[0].typecode == "I":
            self._widen()
        fps, seqs, pack, fingerprint = self._fps, self._seqs, _PACK, self._fingerprint
        mask, split, wide = self._mask, self._split, self._wide
        seq = first_seq
        for rid in ids:
            fp = fingerprint(rid) & _FP_MASK
            bucket = fp & mask
            if bucket < split:
                bucket = fp & wide
            entries = fps[bucket]
            needle = pack(fp)
            if entries.find(needle) >= 0 and self._match(rid, bucket, needle, ids, first_seq):
                self._take_back(ids[: seq - first_seq])
                return False
            entries += needle
            seqs[bucket].append(seq)
            seq += 1
        self._in_buckets += len(ids)
        if self._in_buckets > self._capacity:
            self._grow()
        log = self.log
        if log is not None and not log.nodes(ids, first_seq):
            self.log = None
        return True

    def load(self, ids: Mapping[str, bool]) -> None:
        """Fill an empty index with a journal's ids (id -> is_node) in commit order from seq 1, unchecked:
        they are committed, so already unique (a dict index handing over, a checkpoint restored).

        The table is sized once for all of them (the buckets linear hashing would have split by then)
        and each entry goes straight to its bucket: no pass through the recent ids, no split.
        """
        if len(self):
            msg = "load() fills an empty index"
            raise ValueError(msg)
        count = len(ids)
        buckets = max(_INITIAL_BUCKETS, -(-count // BUCKET_LOAD))
        level = _INITIAL_BUCKETS  # the buckets of this round: addressed by `mask`, or `wide` below split
        while level << 1 <= buckets:
            level <<= 1
        mask, split = level - 1, buckets - level
        wide = mask << 1 | 1
        typecode = "Q" if count >= _SEQ_LIMIT else "I"
        fps: list[array[int]] = [array("I") for _ in range(buckets)]
        seqs: list[array[int]] = [array(typecode) for _ in range(buckets)]
        for seq, fp in enumerate(map(self._fingerprint, ids), start=1):
            fp &= _FP_MASK
            bucket = fp & mask
            if bucket < split:
                bucket = fp & wide
            fps[bucket].append(fp)
            seqs[bucket].append(seq)
        self._fps = [bytearray(entries) for entries in fps]
        self._seqs = seqs
        self._mask, self._wide, self._split = mask, wide, split
        self._in_buckets = count
        self._capacity = BUCKET_LOAD * buckets
        log = self.log
        if log is not None and not log.add(ids, 1):
            self.log = None

    def nbytes(self) -> int:
        """Memory held by the index, in bytes (the containers and their allocated room)."""
        size = sys.getsizeof(self._fps) + sys.getsizeof(self._seqs) + sys.getsizeof(self._recent)
        size += sum(map(sys.getsizeof, self._recent))
        return size + sum(map(sys.getsizeof, self._fps)) + sum(map(sys.getsizeof, self._seqs))

    def check_invariants(self) -> None:
        """Assert every entry sits in the bucket its fingerprint addresses; stress tests call this."""
        assert len(self._fps) == len(self._seqs) == self._mask + 1 + self._split
        assert self._wide == self._mask << 1 | 1
        assert sum(len(seqs) for seqs in self._seqs) == self._in_buckets <= self._capacity
        assert len(self._recent) < RECENT
        for bucket, (fps, seqs) in enumerate(zip(self._fps, self._seqs, strict=True)):
            assert len(fps) == _FINGERPRINT.size * len(seqs)
            assert all(self._bucket(fp) == bucket for fp in array("I", fps))

    def entries(self) -> Iterator[tuple[int, int]]:
        """Every (fingerprint, seq) held: the buckets', then the recent ids'."""
        for fps, seqs in zip(self._fps, self._seqs, strict=True):
            yield from zip(array("I", fps), seqs, strict=True)
        for rid, packed in self._recent.items():
            yield self._fingerprint(rid) & _FP_MASK, packed >> 1

    def _bucket(self, fp: int) -> int:
        bucket = fp & self._mask
        return fp & self._wide if bucket < self._split else bucket

    def _find(self, rid: str) -> tuple[int, bool] | None:
        """(seq, is_node) of the committed record with id `rid`, or None."""
        packed = self._recent.get(rid)
        if packed is not None:
            return packed >> 1, bool(packed & 1)
        fp = self._fingerprint(rid) & _FP_MASK
        return self._match(rid, self._bucket(fp), _PACK(fp))

    def _match(
        self, rid: str, bucket: int, needle: bytes, batch: Sequence[str] = (), first_seq: int = sys.maxsize
    ) -> tuple[int, bool] | None:
        """(seq, is_node) of the entry of `bucket` whose fingerprint is `needle` and whose id is `rid`.

        Every fingerprint match is confirmed by the id itself: read back for a committed record, taken
        from `batch` for the entries from `first_seq` on (a batch being added, not yet committed).
        """
        fps = self._fps[bucket]
        at = fps.find(needle)
        while at >= 0:
            if not at & 3:  # a match across two entries is no match
                seq = self._seqs[bucket][at >> 2]
                found = (batch[seq - first_seq], True) if seq >= first_seq else self._committed_id(seq)
                if found[0] == rid:
                    return seq, found[1]
            at = fps.find(needle, at + 1)
        return None

    def _take_back(self, ids: Sequence[str]) -> None:
        """Remove the entries just appended for `ids`, newest first (no bucket has split since)."""
        for rid in reversed(ids):
            bucket = self._bucket(self._fingerprint(rid) & _FP_MASK)
            del self._fps[bucket][-_FINGERPRINT.size :]
            self._seqs[bucket].pop()

    def _settle(self) -> None:
        """Move the recent ids into the buckets, in one loop."""
        recent, self._recent = self._recent, {}
        if recent and max(recent.values()) >> 1 >= _SEQ_LIMIT and self._seqs[0].typecode == "I":
            self._widen()
        fps, seqs, pack, fingerprint = self._fps, self._seqs, _PACK, self._fingerprint
        mask, split, wide = self._mask, self._split, self._wide
        for rid, packed in recent.items():
            fp = fingerprint(rid) & _FP_MASK
            bucket = fp & mask
            if bucket < split:
                bucket = fp & wide
            fps[bucket] += pack(fp)
            seqs[bucket].append(packed >> 1)
        self._in_buckets += len(recent)
        if self._in_buckets > self._capacity:
            self._grow()

    def _widen(self) -> None:
        """Hold seqs in 8 bytes from now on: the journal is passing 2**32 records."""
        self._seqs = [array("Q", seqs) for seqs in self._seqs]

    def _grow(self) -> None:
        while self._in_buckets > self._capacity:
            self._split_next()
            self._capacity = BUCKET_LOAD * len(self._fps)

    def _split_next(self) -> None:
        """Split bucket `_split` by the next fingerprint bit: the entries with it set move to a new bucket."""
        bucket, bit = self._split, self._mask + 1
        fps, seqs = array("I", self._fps[bucket]), self._seqs[bucket]
        moves = [fp & bit for fp in fps]  # the one pass in Python; the rest are C passes over it
        stays = list(map(not_, moves))
        self._fps[bucket] = bytearray(array("I", compress(fps, stays)))
        self._seqs[bucket] = array(seqs.typecode, compress(seqs, stays))
        self._fps.append(bytearray(array("I", compress(fps, moves))))
        self._seqs.append(array(seqs.typecode, compress(seqs, moves)))
        self._split += 1
        if self._split == bit:  # every bucket of this round is split: address with one more bit
            self._mask, self._wide, self._split = self._wide, self._wide << 1 | 1, 0
