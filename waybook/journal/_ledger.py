"""Compare-and-append, decided the same way by every adapter.

`Ledger` owns what an adapter needs to decide an append without touching storage: the committed head
and the session rules. `plan` turns a batch into sealed records and lines (or recognises an exact retry,
or refuses); the adapter writes the lines once, then calls `commit`. Storage I/O stays in the adapter.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from typing import Final

import attrs
import msgspec

from waybook.codecs import (
    ENCODER,
    SEALED_FIELDS,
    NotJsonDataError,
    decode_record,
    decode_record_lines,
    erased_line_digest,
    line_digest,
    seal,
)
from waybook.journal._clock import new_salt
from waybook.journal._id_index import CompactIdIndex, DictIdIndex
from waybook.journal._roles.session import RulesDelta, SessionRules
from waybook.model import (
    GENESIS,
    SEALED_SCHEMA,
    AppendResult,
    BrokenChainError,
    Erasure,
    Head,
    Header,
    InvalidArgumentError,
    JournalError,
    NewRecord,
    OverlappingBatchError,
    Record,
    StaleWriterError,
)

_SEQUENCES: Final = (list, tuple)
_ERASED: Final = attrgetter("erased")

ReadRange = Callable[[int, int], Sequence[Record]]
"""`(after, limit) -> records`: committed records of the adapter's storage, for retry detection."""


class Plan(msgspec.Struct, frozen=True, gc=False):
    """A validated batch, sealed and ready to write: write `lines`, then `Ledger.commit(plan)`.

    `delta` is what the batch changes in the rules; None for the common case decided without building
    one (a single message extending the leaf of a session journal, `SessionRules.check_one`).
    """

    result: AppendResult
    lines: tuple[bytes, ...]
    delta: RulesDelta | None


Salts = Callable[[], str]
"""Where a journal that seals content takes each record's salt (`new_salt`: 16 bytes from `secrets`)."""


def _salt(new: NewRecord | Record, salts: Salts | None) -> str | None:
    """The salt `new` is sealed with in a journal that seals (`salts` set): the one a verbatim copy
    carries, else a fresh one; None in a journal that does not seal."""
    if salts is None:
        return None
    given = getattr(new, "salt", None)
    return given if given is not None else salts()


def salts_for(header: object) -> Salts | None:
    """The salts a journal with this first record's body seals content with: `new_salt` for a header of
    schema 2 (`SEALED_SCHEMA`), None (content not sealed) for any other."""
    if type(header) is Header and header.schema >= SEALED_SCHEMA:
        return new_salt
    return None


@attrs.define
class Ledger:
    name: str
    rules: SessionRules
    head: Head = GENESIS
    salts: Salts | None = None
    """Set once the header says the journal seals its content (schema 2): a salt for each record that
    holds content (docs/erasure.md). None: every record is written whole, as before schema 2."""
    erased_seen: bool = False
    """Whether a record taken in (`advance`) had its content erased."""
    erasure_log: list[Record] | None = None
    """Set (to a list) by a proof from seq 1 (`verify`, `open_proven`): `advance` appends to it every
    record taken in that is erased or an erasure, so the erasure proof needs no second read of the
    journal (`waybook.journal._erasure.logged_erasure_finding`). None: nothing is logged; `restore`
    sets it to None (a checkpoint's prefix is not decoded, so a log would miss its records)."""

    @property
    def erasures(self) -> bool:
        """Whether the journal has an erasure record or an erased record among those taken in: then
        `verify` proves its erasures too (`waybook.journal._erasure.ErasureCheck`)."""
        return self.erased_seen or self.rules.erasures

    @classmethod
    def empty(cls, name: str, compact_ids: Callable[[], CompactIdIndex] | None = None) -> Ledger:
        """A ledger before any record. Its ids are kept in a dict; given `compact_ids`, a journal that
        grows past COMPACT_ABOVE records moves them to the compact index that `compact_ids()` returns."""
        return cls(name=name, rules=SessionRules(journal=name, compact_ids=compact_ids))

    def plan_one(
        self, batch: Sequence[NewRecord], expected: Head
    ) -> tuple[AppendResult, bytes, RulesDelta | None] | None:
        """`plan` for one record at the head (nearly every append), without a Plan: the result, the
        line and the rules' delta (None for a message extending the leaf, `SessionRules.check_one`), to
        write and then `commit_one`. None for anything else (a batch, a stale or odd `expected`), which
        `plan` decides. Raises the same errors `plan` would, having changed nothing."""
        head = self.head
        if (
            type(batch) in _SEQUENCES
            and len(batch) == 1
            and (expected is head or (type(expected) is Head and expected == head))
        ):
            new = batch[0]
            delta = self.rules.check_one(new)
            salts = self.salts
            salt = (new.salt or salts()) if salts is not None and type(new.body) in SEALED_FIELDS else None
            try:
                record, line = seal(head.seq + 1, new, head.digest, None, salt)
            except NotJsonDataError as exc:
                raise _in_journal(exc, self.name) from None
            return AppendResult(head, Head(record.seq, record.digest), (record,)), line, delta
        return None

    def commit_one(self, result: AppendResult, delta: RulesDelta | None) -> None:
        """`commit` for what `plan_one` returned, once its line is written."""
        self.rules.commit_one(result.records[0].id, delta)
        if self.head.seq == 0:
            self.salts = salts_for(result.records[0].body)
        self.head = result.head

    def plan(self, batch: Sequence[NewRecord], expected: Head, read_range: ReadRange) -> Plan | AppendResult:
        """Decide an append. Returns a Plan to write, or the original result of an exact retry.

        Raises StaleWriterError / OverlappingBatchError (conflict) or a RecordValidationError; in every
        such case nothing has been written. Runs once per append, so the one-record case at the head
        (nearly every append) is decided first and kept flat.
        """
        one = self.plan_one(batch, expected)
        if one is not None:
            result, line, delta = one
            return Plan(result, (line,), delta)
        head = self.head
        if type(batch) not in _SEQUENCES:
            batch = self._as_batch(batch)
        if type(expected) is not Head or type(expected.seq) is not int or type(expected.digest) is not str:
            msg = (
                f"{self.name}: expected must be the Head you last saw (journal.head()), not "
                f"{type(expected).__name__} {expected!r:.80}; nothing was written"
            )
            raise InvalidArgumentError(msg)
        if expected != head:
            return self._retry_or_refuse(tuple(batch), expected, read_range)
        checked = self.rules.check(batch)
        salts = self.salts if head.seq else salts_for(batch[0].body)
        try:
            if len(batch) == 1:
                record, line = seal(head.seq + 1, batch[0], head.digest, None, _salt(batch[0], salts))
                return Plan(AppendResult(head, Head(record.seq, record.digest), (record,)), (line,), checked)
            records: list[Record] = []
            lines: list[bytes] = []
            prev = head.digest
            size = len(batch)
            for index, new in enumerate(batch, start=1):
                record, line = seal(head.seq + index, new, prev, (index, size), _salt(new, salts))
                records.append(record)
                lines.append(line)
                prev = record.digest
        except NotJsonDataError as exc:
            raise _in_journal(exc, self.name) from None
        result = AppendResult(head, Head(record.seq, record.digest), tuple(records))
        return Plan(result, tuple(lines), checked)

    def _as_batch(self, batch: object) -> tuple[NewRecord, ...]:
        if isinstance(batch, str | bytes | NewRecord) or not isinstance(batch, Iterable):
            msg = (
                f"{self.name}: append takes a list of NewRecord values, not {type(batch).__name__}; "
                "nothing was written"
            )
            raise InvalidArgumentError(msg)
        return tuple(batch)

    def commit(self, plan: Plan) -> None:
        """Record that `plan`'s lines are written (the one way every adapter commits a plan)."""
        delta = plan.delta
        result = plan.result
        if delta is None:
            self.rules.commit_one(result.records[0].id, None)
        else:
            self.rules.commit(delta)
        if self.head.seq == 0:
            self.salts = salts_for(result.records[0].body)
        self.head = result.head

    def restore(
        self, head: Head, ids: dict[str, bool], leaf: str | None, header: Header | None = None
    ) -> None:
        """Take a proved prefix's state (a checkpoint: its head, every id in commit order with whether it
        is a node, the leaf, and the header, which says whether the journal seals content) as this empty
        ledger's own."""
        if self.head != GENESIS:
            msg = f"{self.name}: only an empty ledger can take a checkpoint's state"
            raise ValueError(msg)
        rules = self.rules
        rules.ids = DictIdIndex(ids)
        rules.count = head.seq
        rules.has_header = head.seq > 0
        rules.leaf = leaf
        rules.compact_if_large()
        self.salts = salts_for(header)
        self.erasure_log = None
        self.head = head

    def advance(self, records: Iterable[Record]) -> None:
        """Take in committed records whose chain the caller has proved (a reopen, another writer's tail).

        Each record is also held to the session rules, since a well-chained history written by a faulty
        writer can still break them. On a broken rule the ledger may have taken the first record (the
        header) of `records`: a caller that retries record by record skips the seqs it already holds.
        """
        records = tuple(records)
        if not records:
            return
        if self.head.seq == 0 and len(records) > 1:
            # The header alone first, so the run of messages after it is checked in one pass. If a
            # later record breaks a rule, the ledger keeps the header (callers skip what it holds).
            self.advance(records[:1])
            records = records[1:]
        self.rules.replay(records)
        if self.head.seq == 0:
            self.salts = salts_for(records[0].body)
        if not self.erased_seen and any(map(_ERASED, records)):
            self.erased_seen = True
        log = self.erasure_log
        if log is not None and (self.erased_seen or self.rules.erasures):
            log.extend(r for r in records if r.erased is not None or type(r.body) is Erasure)
        self.head = Head.of(records[-1])

    def _retry_or_refuse(
        self, batch: tuple[NewRecord, ...], expected: Head, read_range: ReadRange
    ) -> AppendResult:
        retry = self._committed_retry(batch, expected, read_range)
        if retry is not None:
            return retry
        overlap = tuple(r.id for r in batch if isinstance(r, NewRecord) and r.id in self.rules.ids)
        if overlap:
            raise OverlappingBatchError(journal=self.name, ids=overlap)
        raise StaleWriterError(journal=self.name, expected=expected, actual=self.head)

    def _committed_retry(
        self, batch: tuple[NewRecord, ...], expected: Head, read_range: ReadRange
    ) -> AppendResult | None:
        """The original result if `batch` is already committed right after `expected`, else None."""
        if not batch or expected.seq + len(batch) > self.head.seq or expected.seq < 0:
            return None
        first = batch[0]
        if not isinstance(first, NewRecord) or first.id not in self.rules.ids:
            return None
        window = read_range(max(expected.seq - 1, 0), len(batch) + (1 if expected.seq else 0))
        if expected.seq:
            anchor, window = window[0], window[1:]
            if anchor.digest != expected.digest:
                return None
        elif expected != GENESIS:
            return None
        size = len(batch)
        for index, (new, committed) in enumerate(zip(batch, window, strict=True), start=1):
            if not isinstance(new, NewRecord) or (new.id, new.at) != (committed.id, committed.at):
                return None
            if committed.batch != ((index, size) if size > 1 else None):
                return None  # part of a committed batch, or several records committed apart: not this batch
            if ENCODER.encode(new.body) != ENCODER.encode(committed.body):
                return None
        return AppendResult(prior=expected, head=Head.of(window[-1]), records=tuple(window))


def iter_chain(lines: Iterable[bytes], *, start: Head = GENESIS, journal: str = "") -> Iterator[Record]:
    """Decode `lines` (the records after `start`) and prove each follows the one before.

    Raises DecodeError for bytes that are not a record, BrokenChainError for a wrong seq, prev or digest.
    """
    head = start
    chunk: list[bytes] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == 1024:
            records, error = prove_lines(chunk, head, journal)
            yield from records
            if error is not None:
                raise error
            head, chunk = Head.of(records[-1]), []
    records, error = prove_lines(chunk, head, journal)
    yield from records
    if error is not None:
        raise error


_SUFFIX: Final = len(b',"digest":"') + 64 + 2
_LINE_START: Final = b'{"'  # a record's line (plain, sealed or erased) starts with an object's first key
_AFTER_LINE_START: Final = b"{#"  # the least bytes greater than every line starting with _LINE_START


def prove_lines(
    lines: Sequence[bytes], start: Head, journal: str = ""
) -> tuple[list[Record], JournalError | None]:
    """Decode and prove consecutive lines after `start`: the good prefix, and the error at the first bad one.

    The hot loop of every replay and every open. The whole batch is decoded in one C call when every line
    starts a JSON object (so each line is exactly one value and record i is line i); the chain is then
    proved in one flat loop. From the first line that fails anything, lines go one by one through
    `check_line`, which upcasts old versions or produces the exact typed error.
    """
    records = _decode_aligned(lines)
    seq, prev = start.seq, start.digest
    good = _proved_prefix(lines, records, seq, prev)
    if good:
        seq, prev = seq + good, records[good - 1].digest
    del records[good:]
    for line in lines[good:]:
        seq += 1
        try:
            record = check_line(line, seq, prev, journal)
        except JournalError as exc:
            return records, exc
        records.append(record)
        prev = record.digest
    return records, None


def _proved_prefix(lines: Sequence[bytes], records: list[Record], seq: int, prev: str) -> int:
    """How many of `records` (decoded from `lines`) follow each other from (`seq`, `prev`) and match
    their bytes: each check is one pass in C over the batch; only a batch with a bad line (or an erased
    record, whose digest is finished from its content's state: docs/erasure.md) is walked."""
    if not records:
        return 0
    digests = [record.digest for record in records]
    sha256 = hashlib.sha256
    # Hashing all but the last _SUFFIX bytes also proves `digest` is the last field: if it is not, the
    # slice covers other bytes and the hash cannot match.
    if (
        [record.seq for record in records] == list(range(seq + 1, seq + 1 + len(records)))
        and [record.prev for record in records] == [prev, *digests[:-1]]
        and [sha256(line[:-_SUFFIX] + b"}").hexdigest() for line in lines] == digests
    ):
        return len(records)
    good = 0
    for line, record in zip(lines, records, strict=True):
        if (
            record.seq != seq + 1
            or record.prev != prev
            or (
                sha256(line[: len(line) - _SUFFIX] + b"}").hexdigest() != record.digest
                and (record.erased is None or erased_line_digest(line, record) != record.digest)
            )
        ):
            break
        seq, prev = seq + 1, record.digest
        good += 1
    return good


def _decode_aligned(lines: Sequence[bytes]) -> list[Record]:
    """All of `lines` decoded at once, or [] when that cannot be done line for line.

    `decode_lines` skips blank lines and accepts several values on one line, so it is only used when
    every line starts with `{"seq":` (none is blank) and it returns exactly one record per line. All
    lines start so exactly when the least and the greatest of them do (two C passes over the lines).
    """
    if not lines or min(lines) < _LINE_START or max(lines) >= _AFTER_LINE_START:
        return []
    records = decode_record_lines(b"\n".join(lines))
    return records if records is not None and len(records) == len(lines) else []


def decode_records(lines: Sequence[bytes], where: str = "") -> list[Record]:
    """Decode committed lines (no chain check): in one C call when they are aligned, else line by line,
    which upcasts old versions and raises the typed DecodeError naming `where`."""
    records = _decode_aligned(lines)
    if records or not lines:
        return records
    return [decode_record(line, where=where) for line in lines]


def check_line(line: bytes, seq: int, prev: str, journal: str = "") -> Record:
    """Decode one line and prove it is record `seq` following digest `prev`."""
    record = decode_record(line, where=lambda: f"{journal} seq {seq}".strip())
    if record.seq != seq:
        raise BrokenChainError(journal=journal, seq=seq, reason=f"the record says seq {record.seq}")
    if record.prev != prev:
        reason = "its prev is not the digest of the record before it"
        raise BrokenChainError(journal=journal, seq=seq, reason=reason)
    if line_digest(line) != record.digest:
        reason = "its digest does not match its bytes (altered or not canonical)"
        raise BrokenChainError(journal=journal, seq=seq, reason=reason)
    return record


def _in_journal(exc: NotJsonDataError, name: str) -> NotJsonDataError:
    """The codec's refusal, with the journal's name in front (the codec does not know it)."""
    return type(exc)(exc.reason, path=exc.path, journal=name, record_id=exc.record_id)
