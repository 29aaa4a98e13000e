"""Erasing sealed content, decided the same way by every adapter (docs/erasure.md).

An adapter's `erase` holds its writer lock (or transaction), reads the records asked for, and calls
`plan_erasure`: which records to take (sealed, content still there, holding a part asked for), their
commitments, and the erasure records to append first. It appends them, then replaces each taken line
by `ErasurePlan.erased_lines` (same length, same digest), and returns `receipt_of` the committed
records. `erasure_receipt` recomputes that receipt from the journal alone; `ErasureCheck` is what
`verify` adds to the chain proof: every erased record named by its erasure, every erasure's records
erased or else pending.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, TypeVar

import attrs

from waybook.codecs import ENCODER, SEALED_FIELDS, content_state, erase_line, sealed_content
from waybook.journal._ledger import decode_records
from waybook.journal._protocol import SessionJournal
from waybook.model import (
    CONTENT_PARTS,
    BlobBlock,
    Body,
    Erased,
    ErasedRecord,
    Erasure,
    Head,
    Header,
    ImageBlock,
    IntegrityError,
    InvalidArgumentError,
    InvalidErasureError,
    NewRecord,
    NotSealedError,
    Record,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)

ENTRIES_PER_RECORD: Final = 20_000
"""Records one erasure record names at most (about 3 MB of JSON, far under a record's limit); a larger
erasure appends several erasure records in one batch."""

MAX_SEQS: Final = 10_000_000
"""Seqs one erasure request may name (a range of ten million records is read in one writer lock)."""


def content_parts(body: Body) -> tuple[str, ...]:
    """What kinds of content `body` holds, as `CONTENT_PARTS` names them (in that order)."""
    found: set[str] = set()
    result = type(body) is ToolResult
    for block in getattr(body, "content", ()) or ():
        kind = type(block)
        if kind is ImageBlock or (kind is BlobBlock and block.media_type.startswith("image/")):
            found.add("images")
        elif result:
            found.add("tool_output")
        elif kind is TextBlock:
            found.add("text")
        elif kind is ThinkingBlock:
            found.add("thinking")
        elif kind is ToolCallBlock:
            found.add("tool_arguments")
        elif kind is BlobBlock:
            found.add("files")
    if getattr(body, "summary", ""):
        found.add("text")
    if getattr(body, "details", None) is not None or getattr(body, "data", None) is not None:
        found.add("data")
    return tuple(part for part in CONTENT_PARTS if part in found)


# --- the request ------------------------------------------------------------------------------------


@attrs.frozen
class ErasureRequest:
    """A checked erasure request: the seqs (increasing, each once), why, who, the policy, the parts that
    choose records (empty: every record with content)."""

    seqs: tuple[int, ...]
    reason: str
    actor: str | None = None
    policy: str | None = None
    parts: tuple[str, ...] = ()


def check_request(
    name: str,
    seqs: Iterable[int] | int,
    *,
    reason: object,
    actor: object = None,
    policy: object = None,
    parts: Iterable[str] | None = None,
) -> ErasureRequest:
    """The request as a value, or InvalidErasureError saying what is wrong (nothing read or written)."""
    if isinstance(seqs, int) and not isinstance(seqs, bool):
        seqs = (seqs,)
    if isinstance(seqs, str | bytes) or not isinstance(seqs, Iterable):
        msg = f"{name}: erase takes the seqs of records (an int, a range or a list of ints), not {seqs!r:.60}"
        raise InvalidArgumentError(msg)
    chosen: set[int] = set()
    for seq in seqs:
        if type(seq) is not int or seq < 1:
            msg = f"{name}: {seq!r} is not a record's seq (1, 2, ...); nothing was erased"
            raise InvalidErasureError(msg)
        chosen.add(seq)
        if len(chosen) > MAX_SEQS:
            msg = f"{name}: an erasure names at most {MAX_SEQS:,} records; erase in several steps"
            raise InvalidErasureError(msg)
    if not chosen:
        msg = f"{name}: erase names no record; give the seqs whose content to erase"
        raise InvalidErasureError(msg)
    if type(reason) is not str or not reason.strip():
        msg = f"{name}: an erasure needs a reason (why the content goes: a request, a policy); nothing erased"
        raise InvalidErasureError(msg)
    for what, value in (("actor", actor), ("policy", policy)):
        if value is not None and (type(value) is not str or not value.strip()):
            msg = f"{name}: an erasure's {what} is a non-empty string or None, not {value!r:.60}"
            raise InvalidErasureError(msg)
    wanted: tuple[str, ...] = ()
    if parts is not None:
        if isinstance(parts, str):
            parts = (parts,)
        given = set(parts)
        unknown = sorted(str(part) for part in given - set(CONTENT_PARTS))
        if unknown or not given:
            msg = f"{name}: parts are {', '.join(CONTENT_PARTS)}; not {', '.join(unknown) or 'none'}"
            raise InvalidErasureError(msg)
        wanted = tuple(part for part in CONTENT_PARTS if part in given)
    return ErasureRequest(tuple(sorted(chosen)), reason, actor, policy, wanted)  # type: ignore[arg-type]


# --- the plan ---------------------------------------------------------------------------------------


@attrs.frozen
class Skipped:
    """A seq an erasure was asked for and did not take, and why: no content, already erased, or its
    content holds none of the parts asked for."""

    seq: int
    why: str


@attrs.frozen
class Target:
    """A record an erasure takes: as it is, its line, and what the erasure record says of it."""

    record: Record
    line: bytes
    entry: ErasedRecord


@attrs.frozen
class ErasurePlan:
    """What `erase` writes: the erasure records first (`erasures`, one batch), then each target's line
    replaced by `erased_lines(first)`, `first` being the seq the first erasure record got."""

    erasures: tuple[NewRecord, ...]
    targets: tuple[Target, ...]
    skipped: tuple[Skipped, ...]

    def erased_lines(self, first: int) -> list[tuple[int, bytes]]:
        """Each target's seq and erased line (its `erased` naming the erasure record that names it)."""
        lines: list[tuple[int, bytes]] = []
        for index, target in enumerate(self.targets):
            line, erased = erase_line(target.line, target.record, first + index // ENTRIES_PER_RECORD)
            if erased.state != target.entry.state or erased.blocks != target.entry.blocks:
                msg = f"record {target.record.seq}: its content changed while it was being erased"
                raise AssertionError(msg)
            lines.append((target.record.seq, line))
        return lines


def plan_erasure(
    name: str,
    request: ErasureRequest,
    found: Iterable[tuple[Record, bytes]],
    head: Head,
    *,
    ids: Callable[[], str],
    clock: Callable[[], str],
) -> ErasurePlan:
    """Decide an erasure from the records `found` for `request.seqs` (each with its stored line, in
    order) in a journal at `head`. Raises InvalidErasureError for a seq past the head or the header,
    NotSealedError for content written without a seal; nothing is written by this function."""
    last = request.seqs[-1]
    if last > head.seq:
        msg = f"{name}: there is no record {last} (the journal ends at seq {head.seq}); nothing was erased"
        raise InvalidErasureError(msg)
    wanted = set(request.parts)
    targets: list[Target] = []
    skipped: list[Skipped] = []
    seen = 0
    for record, line in found:
        seen += 1
        seq, body = record.seq, record.body
        if type(body) is Header:
            msg = f"{name}: record {seq} is the header; it holds no content to erase"
            raise InvalidErasureError(msg)
        if record.erased is not None:
            skipped.append(Skipped(seq, f"already erased (by seq {record.erased.by})"))
            continue
        if not sealed_content(body):
            skipped.append(Skipped(seq, "holds no content"))
            continue
        parts = content_parts(body)
        if wanted and not wanted.intersection(parts):
            skipped.append(Skipped(seq, f"holds none of {', '.join(request.parts)}"))
            continue
        sealed = content_state(line, record)
        if sealed is None:
            msg = (
                f"{name}: record {seq} ({record.kind}) holds content written without a seal (a journal of "
                "schema 1, from before erasable content); its digest covers that content, so it cannot be "
                "erased. `waybook migrate` writes a sealed copy of the journal; nothing was erased"
            )
            raise NotSealedError(msg, journal=name, seq=seq)
        state, blocks = sealed
        targets.append(Target(record, line, ErasedRecord(seq=seq, state=state, blocks=blocks, parts=parts)))
    if seen != len(request.seqs):
        msg = f"{name}: read {seen} of the {len(request.seqs)} records asked for; nothing was erased"
        raise AssertionError(msg)
    entries = [target.entry for target in targets]
    erasures = tuple(
        NewRecord(
            id=ids(),
            at=clock(),
            body=Erasure(
                records=tuple(entries[start : start + ENTRIES_PER_RECORD]),
                reason=request.reason,
                actor=request.actor,
                policy=request.policy,
                parts=request.parts,
            ),
        )
        for start in range(0, len(entries), ENTRIES_PER_RECORD)
    )
    return ErasurePlan(erasures, tuple(targets), tuple(skipped))


_Line = TypeVar("_Line")


def runs(seqs: Sequence[int]) -> Iterator[tuple[int, int]]:
    """`seqs` (increasing) as runs of consecutive seqs: `(after, count)`, as a journal's read takes them."""
    start = previous = -1
    for seq in seqs:
        if seq != previous + 1:
            if start >= 0:
                yield start - 1, previous - start + 1
            start = seq
        previous = seq
    if start >= 0:
        yield start - 1, previous - start + 1


def records_at(
    read_lines: Callable[[int, int], Iterable[_Line]], seqs: Sequence[int], decode: Callable[[_Line], Record]
) -> Iterator[tuple[Record, _Line]]:
    """The records of `seqs` with their stored lines, read a run at a time."""
    for after, count in runs(seqs):
        for line in read_lines(after, count):
            yield decode(line), line


# --- the receipt ------------------------------------------------------------------------------------


@attrs.frozen
class ErasedEntry:
    """One record an erasure took: its seq, id and digest (unchanged) and its content's commitment."""

    seq: int
    id: str
    digest: str
    state: str
    blocks: int
    parts: tuple[str, ...]


@attrs.frozen
class ErasureReceipt:
    """What an erasure did, recomputable from the journal (`erasure_receipt`): the journal's id, the
    erasure records (their heads), each record erased, why, by whom, under which policy, what chose them,
    when, and `sha256`, a SHA-256 over all of it. `skipped` (what was asked for and not taken, and why)
    is the erasure call's own note: not recorded in the journal, not in `sha256` or equality."""

    journal: str
    erasures: tuple[Head, ...]
    erased: tuple[ErasedEntry, ...]
    reason: str | None
    actor: str | None
    policy: str | None
    parts: tuple[str, ...]
    at: str | None
    skipped: tuple[Skipped, ...] = attrs.field(default=(), eq=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(ENCODER.encode(self.fields())).hexdigest()

    def fields(self) -> dict[str, Any]:
        """The receipt's recomputable fields as JSON data (what `sha256` covers)."""
        return {
            "journal": self.journal,
            "erasures": [[head.seq, head.digest] for head in self.erasures],
            "erased": [attrs.asdict(entry) for entry in self.erased],
            "reason": self.reason,
            "actor": self.actor,
            "policy": self.policy,
            "parts": list(self.parts),
            "at": self.at,
        }

    def as_json(self) -> dict[str, Any]:
        """The receipt as JSON data: its fields, `sha256`, and `skipped`."""
        data = self.fields()
        data["erased"] = [{**entry, "parts": list(entry["parts"])} for entry in data["erased"]]
        data["sha256"] = self.sha256
        data["skipped"] = [[skip.seq, skip.why] for skip in self.skipped]
        return data


def receipt_of(
    journal_id: str,
    erasures: Sequence[Record],
    erased: Iterable[Record],
    skipped: Sequence[Skipped] = (),
) -> ErasureReceipt:
    """The receipt of the erasure records `erasures` (one batch, in order) and the records they erased."""
    if not erasures:
        return ErasureReceipt(journal_id, (), (), None, None, None, (), None, tuple(skipped))
    bodies = [record.body for record in erasures]
    first = bodies[0]
    if not all(type(body) is Erasure for body in bodies):
        msg = "an erasure receipt is made of erasure records"
        raise InvalidArgumentError(msg)
    entries = {entry.seq: entry for body in bodies for entry in body.records}  # type: ignore[union-attr]
    taken: list[ErasedEntry] = []
    for record in erased:
        entry = entries[record.seq]
        taken.append(
            ErasedEntry(record.seq, record.id, record.digest, entry.state, entry.blocks, entry.parts)
        )
    return ErasureReceipt(
        journal=journal_id,
        erasures=tuple(Head.of(record) for record in erasures),
        erased=tuple(taken),
        reason=first.reason,  # type: ignore[union-attr]
        actor=first.actor,  # type: ignore[union-attr]
        policy=first.policy,  # type: ignore[union-attr]
        parts=first.parts,  # type: ignore[union-attr]
        at=erasures[0].at,
        skipped=tuple(skipped),
    )


# --- the proof ----------------------------------------------------------------------------------------


@attrs.frozen
class ErasureFinding:
    """What `ErasureCheck` found: damage (absent content no erasure explains, or an erasure that does not
    match what it took) at `seq`, or nothing; and the records erasures name whose content is still there."""

    damage_seq: int | None
    damage: str | None
    pending: tuple[int, ...]


class ErasureCheck:
    """`verify`'s erasure proof, record by record in journal order (its memory: a bit per sealed record,
    an entry per erased one).

    The chain proof has already held each erased record's digest (finished from its state) and header;
    this adds that each is named by the erasure its `erased.by` says with the same state and blocks, and
    finds the records erasures name that still hold their content (a pending erasure: `erase --resume`).
    """

    def __init__(self, *, track_present: bool = True) -> None:
        self._awaiting: dict[int, Erased] = {}
        self._present: bytearray | None = bytearray() if track_present else None
        self.pending: dict[int, tuple[int, ErasedRecord]] = {}
        """Records erasures name whose content is still there: seq -> (erasure seq, its entry)."""
        self._damage: tuple[int, str] | None = None
        self.inconclusive = False
        """Without `track_present`: an erasure named a record that no erased record matched, so only
        the sealed records it was not shown (a pending erasure, or damage) can decide."""

    def see(self, record: Record) -> None:
        if self._damage is not None or self.inconclusive:
            return
        seq = record.seq
        erased = record.erased
        if erased is not None:
            if erased.by <= seq:
                self._damage = (seq, f"record {seq} names erasure {erased.by}, which is not after it")
            else:
                self._awaiting[seq] = erased
        elif record.salt is not None and self._present is not None:
            self._mark(seq)
        body = record.body
        if type(body) is Erasure:
            for entry in body.records:
                self._named(seq, entry)

    def _mark(self, seq: int) -> None:
        present = self._present
        assert present is not None
        byte = seq >> 3
        if byte >= len(present):
            present.extend(bytes(byte + 1 - len(present) + 1024))
        present[byte] |= 1 << (seq & 7)

    def _is_present(self, seq: int) -> bool:
        present = self._present
        assert present is not None
        byte = seq >> 3
        return byte < len(present) and bool(present[byte] & (1 << (seq & 7)))

    def _named(self, by: int, entry: ErasedRecord) -> None:
        erased = self._awaiting.get(entry.seq)
        if erased is not None and erased.by == by:
            del self._awaiting[entry.seq]
            if (erased.state, erased.blocks) != (entry.state, entry.blocks):
                reason = (
                    f"record {entry.seq} was erased with commitment {erased.state[:12]} ({erased.blocks} "
                    f"blocks) but erasure {by} committed to {entry.state[:12]} ({entry.blocks} blocks)"
                )
                self._damage = (entry.seq, reason)
        elif self._present is None:
            self.inconclusive = True
        elif self._is_present(entry.seq):
            self.pending[entry.seq] = (by, entry)
        else:
            reason = f"erasure {by} names record {entry.seq}, which is not a sealed record it erased"
            self._damage = (by, reason)

    def finish(self) -> ErasureFinding:
        if self._damage is None and self._awaiting:
            seq = min(self._awaiting)
            reason = (
                f"the content of record {seq} is absent, but no committed erasure names it (its marker "
                f"names erasure {self._awaiting[seq].by}): content was removed without an erasure record"
            )
            self._damage = (seq, reason)
        if self._damage is None:
            return ErasureFinding(None, None, tuple(sorted(self.pending)))
        seq, reason = self._damage
        return ErasureFinding(seq, reason, tuple(sorted(self.pending)))


def logged_erasure_finding(log: Iterable[Record]) -> ErasureFinding | None:
    """`erasure_finding` from a proof's `Ledger.erasure_log` (the erased and erasure records, in order),
    without reading the journal again; None when the log cannot decide (an erasure names a record no
    erased record matches: the caller reads the journal, `erasure_finding`)."""
    check = ErasureCheck(track_present=False)
    for record in log:
        check.see(record)
        if check.inconclusive:
            return None
    return check.finish()


def erasure_finding(lines: Iterable[bytes]) -> ErasureFinding:
    """`ErasureCheck` over a journal's committed lines (already proved by the chain)."""
    return erasure_check(lines).finish()


def erasure_check(lines: Iterable[bytes]) -> ErasureCheck:
    """An `ErasureCheck` that has seen every one of `lines` (a journal's committed lines, in order)."""
    check = ErasureCheck()
    chunk: list[bytes] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == 4096:
            for record in decode_records(chunk):
                check.see(record)
            chunk = []
    for record in decode_records(chunk):
        check.see(record)
    return check


def pending_lines(
    name: str, check: ErasureCheck, found: Iterable[tuple[Record, bytes]]
) -> list[tuple[int, bytes]]:
    """The erased lines of the pending records `found` (the records `check.pending` names, with their
    stored lines): each must still hold the content its erasure committed to (IntegrityError if not)."""
    erased: list[tuple[int, bytes]] = []
    for record, line in found:
        by, entry = check.pending[record.seq]
        new, marker = erase_line(line, record, by)
        if (marker.state, marker.blocks) != (entry.state, entry.blocks):
            msg = (
                f"{name}: record {record.seq} does not hold the content erasure {by} committed to (its "
                "commitment differs); nothing was erased. Run `waybook verify`"
            )
            raise IntegrityError(msg)
        erased.append((record.seq, new))
    return erased


def is_sealable(body: Body) -> bool:
    """Whether a body's kind seals content, and this body holds some."""
    return type(body) in SEALED_FIELDS and bool(sealed_content(body))


# --- the library's face -------------------------------------------------------------------------------


class ErasingJournal:
    """A journal that erases (docs/erasure.md): its `erase` checks the request the same way for every
    adapter (InvalidErasureError, nothing read or written, for a malformed one) and hands the checked
    `ErasureRequest` to the adapter's `erase_checked`, which does the erasure."""

    __slots__ = ()

    @property
    def name(self) -> str:
        raise NotImplementedError

    def erase(
        self,
        seqs: Iterable[int] | int,
        *,
        reason: str,
        actor: str | None = None,
        policy: str | None = None,
        parts: Iterable[str] | None = None,
    ) -> ErasureReceipt:
        """Erase the content of the records `seqs` (sealed, content still there, holding one of `parts`
        if given): append the erasure record, then remove the taken records' content. Returns the
        receipt; `waybook.journal.erase` is the same for any journal."""
        request = check_request(self.name, seqs, reason=reason, actor=actor, policy=policy, parts=parts)
        return self.erase_checked(request)

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        """Erase as `erase` does, the request already checked (the adapter's own work)."""
        raise NotImplementedError


def erase(
    journal: object,
    seqs: Iterable[int] | int,
    *,
    reason: str,
    actor: str | None = None,
    policy: str | None = None,
    parts: Iterable[str] | None = None,
) -> ErasureReceipt:
    """Erase the content of the records `seqs` of `journal` (docs/erasure.md): append an erasure record
    (which records, why, who, the policy), then remove their content's bytes, each record keeping its
    envelope, kind, tree links, usage and digest. Records with no content, already erased, or (with
    `parts`) holding none of those parts are skipped and listed in the receipt's `skipped`.

    `journal` is a journal that can erase: `JsonlJournal`, `InMemoryJournal`, or a store's journal
    (`store.open(id)`). Raises InvalidErasureError or NotSealedError (nothing written) for a request it
    cannot do; the receipt recomputes from the journal (`erasure_receipt`)."""
    method = getattr(journal, "erase", None)
    if not callable(method):
        msg = (
            f"erase takes a journal that can erase (JsonlJournal, InMemoryJournal, store.open(id)), not "
            f"{type(journal).__name__}"
        )
        raise InvalidArgumentError(msg)
    receipt = method(seqs, reason=reason, actor=actor, policy=policy, parts=parts)
    assert isinstance(receipt, ErasureReceipt)
    return receipt


def erasure_receipt(journal: SessionJournal, seq: int) -> ErasureReceipt:
    """The receipt of the erasure whose record is at `seq` (or of the batch of erasure records holding it),
    recomputed from the journal alone: equal to the one `erase` returned (its `skipped` aside)."""
    name = journal.name
    head = journal.head()
    if type(seq) is not int or not 1 < seq <= head.seq:
        msg = f"{name}: there is no record {seq!r} (the journal ends at seq {head.seq})"
        raise InvalidErasureError(msg)
    (record,) = journal.read(seq - 1, 1)
    if type(record.body) is not Erasure:
        msg = f"{name}: record {seq} is a {record.kind} record, not an erasure"
        raise InvalidErasureError(msg)
    first, size = (seq, 1) if record.batch is None else (seq - record.batch[0] + 1, record.batch[1])
    erasures = [r for r in journal.read(first - 1, size) if type(r.body) is Erasure]
    named = [entry.seq for r in erasures for entry in r.body.records]  # type: ignore[union-attr]
    (header,) = journal.read(0, 1)
    journal_id = header.body.journal if type(header.body) is Header else name
    erased = [found for found, _ in records_at(_reader(journal), named, lambda line: line)]
    return receipt_of(journal_id, erasures, erased)


def _reader(journal: SessionJournal) -> Callable[[int, int], Iterable[Record]]:
    return lambda after, count: journal.read(after, count)
