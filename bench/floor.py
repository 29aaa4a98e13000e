"""The least Python that keeps the in-memory append contract, as one function: a floor, not an adapter.

`InlineJournal.append` does per one-record append what `InMemoryJournal` does (lock, compare the head,
check the id, timestamp, uniqueness, parent and stop reason, encode, hash, decode the body back, keep the
record and its line, return an AppendResult), but for message records only and with every call inlined.
The benchmark measures it in the same run as the real adapter, so the gap between the two is what our
structure costs, and the floor itself is what this interpreter on this machine allows.
"""

from __future__ import annotations

import hashlib
import threading

import msgspec

from waybook.codecs._canonical import ENCODER
from waybook.journal._roles.session import ID_PATTERN, TIMESTAMP_PATTERN
from waybook.model import GENESIS, AppendResult, AssistantMessage, Head, NewRecord, Record
from waybook.model._records import TERMINAL_STOP_REASONS, AnyBody, Header

_BODY = msgspec.json.Decoder(AnyBody).decode
_ID = ID_PATTERN.fullmatch
_AT = TIMESTAMP_PATTERN.fullmatch


class InlineJournal:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[Record] = []
        self.lines: list[bytes] = []
        self.ids: dict[str, bool] = {}
        self.leaf: str | None = None
        self.head = GENESIS

    def append(self, batch: tuple[NewRecord, ...], *, expected: Head) -> AppendResult:
        with self.lock:
            head = self.head
            if expected != head:
                raise ValueError("stale")
            new = batch[0]
            rid, at, body = new.id, new.at, new.body
            if type(rid) is not str or not _ID(rid) or type(at) is not str or not _AT(at):
                raise ValueError("format")
            if rid in self.ids or (type(body) is Header) != (head.seq == 0):
                raise ValueError("rule")
            if body.IS_NODE:
                if body.parent != self.leaf:  # type: ignore[union-attr]
                    raise ValueError("parent")
                if type(body) is AssistantMessage and body.stop_reason not in TERMINAL_STOP_REASONS:
                    raise ValueError("partial")
            seq, prev = head.seq + 1, head.digest
            body_bytes = ENCODER.encode(body)
            covered = b'{"seq":%d,"id":"%s","at":"%s","prev":"%s","body":%s}' % (
                seq,
                rid.encode(),
                at.encode(),
                prev.encode(),
                body_bytes,
            )
            digest = hashlib.sha256(covered).hexdigest()
            line = covered[:-1] + b',"digest":"' + digest.encode() + b'"}'
            record = Record(seq=seq, id=rid, at=at, prev=prev, body=_BODY(body_bytes), digest=digest)
            result = AppendResult(head, Head(seq, digest), (record,))
            self.records.append(record)
            self.lines.append(line)
            self.ids[rid] = body.IS_NODE
            if body.IS_NODE:
                self.leaf = rid
            self.head = result.head
            return result
