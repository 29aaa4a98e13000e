"""Receipts are projections too: every memory receipt is re-derived from the journals and checked.

- `derive_pin_receipt(canonical, pins, receipt)` and `derive_adoption_receipt(canonical, pins, receipt)`:
  the pin journal (a session or pin journal) holds one pin record per host call with the receipt's
  fields; the receipt must be that record's, the authority id must be the canonical journal's header
  id, both heads must be heads of the canonical journal, and an adoption's record (actor, binding,
  nomination, prior head, its writes) must be in the canonical journal. A forged receipt matches none.
- `derive_remember_receipt(working, receipt)`: the request's records in the working journal.
- `derive_tool_receipt(working, receipt)`: a Memory port receipt, from the record at its seq.

Each raises IntegrityError naming the first field that differs; `check_receipts` runs them over the
receipts a session journal holds (what `waybook verify` calls).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial

import attrs

from waybook.journal import SessionJournal, links_of
from waybook.memory.canonical._outcomes import (
    AdoptionReceipt,
    PinReceipt,
    RememberReceipt,
    binding_of,
    fields_digest,
    head_json,
)
from waybook.memory.working import MemoryProjection, Receipt
from waybook.model import (
    GENESIS,
    Head,
    Header,
    IntegrityError,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryWrite,
    Record,
    ToolResult,
)
from waybook.projections import replay


def remember_receipt(authority: str, request_id: str, first_seq: int, head: Head) -> RememberReceipt:
    fields = {
        "kind": "waybook.remember_receipt/1",
        "authority": authority,
        "request": request_id,
        "first_seq": first_seq,
        "head": head_json(head),
    }
    return RememberReceipt(authority, request_id, first_seq, head, fields_digest(fields))


def _fail(message: str) -> IntegrityError:
    return IntegrityError(message)


def _head_at(journal: SessionJournal, seq: int) -> Head:
    if seq == 0:
        return GENESIS
    record = next(iter(journal.read(after=seq - 1, limit=1)), None)
    if record is None:
        msg = f"{journal.name} has no seq {seq}"
        raise _fail(msg)
    return Head.of(record)


def _header(journal: SessionJournal) -> Header:
    first = next(iter(journal.read(limit=1)), None)
    if first is None or not isinstance(first.body, Header):
        msg = f"{journal.name} has no header"
        raise _fail(msg)
    return first.body


def _pin_record(pins: SessionJournal, receipt_sha256: str) -> MemoryPinMoved:
    for record in pins.read():
        if isinstance(record.body, MemoryPinMoved) and record.body.receipt == receipt_sha256:
            return record.body
    msg = (
        f"{pins.name} records no host call with receipt {receipt_sha256[:12]}: it did not issue that receipt"
    )
    raise _fail(msg)


def _pin_move(
    canonical: SessionJournal,
    pins: SessionJournal,
    receipt: PinReceipt | AdoptionReceipt,
    statuses: tuple[str, ...],
) -> tuple[MemoryPinMoved, Head, Head]:
    """The pin record `receipt` names, with the heads it moves between: a move of `receipt`'s authority
    with one of `statuses`, both heads in `canonical`; IntegrityError otherwise."""
    body = _pin_record(pins, receipt.receipt_sha256)
    prior, new = Head(body.prior_seq, body.prior_digest), Head(body.new_seq, body.new_digest)
    if body.status not in statuses or body.canonical != receipt.authority:
        msg = f"pin record {receipt.receipt_sha256[:12]} is a {body.status} of {body.canonical}: another call"
        raise _fail(msg)
    _check_heads(canonical, prior, new)
    return body, prior, new


def _check_heads(canonical: SessionJournal, *heads: Head) -> None:
    for head in heads:
        if _head_at(canonical, head.seq) != head:
            msg = f"{canonical.name} does not have head {head}"
            raise _fail(msg)


def _check_authority(canonical: SessionJournal, authority: str) -> None:
    header = _header(canonical)
    if header.role != "canonical_memory" or header.journal != authority:
        msg = (
            f"the receipt names authority {authority!r}; {canonical.name} is {header.journal!r} {header.role}"
        )
        raise _fail(msg)


def derive_pin_receipt(canonical: SessionJournal, pins: SessionJournal, receipt: PinReceipt) -> PinReceipt:
    """The advance/unchanged receipt as the journals prove it; IntegrityError if `receipt` differs.

    An `unchanged` call writes nothing: its receipt is proven by the pin having been at its head (a pin
    record of this canonical journal ending there, or the canonical header, where every pin starts)
    and by the binding of the canonical journal's header."""
    _check_authority(canonical, receipt.authority)
    if receipt.status == "unchanged" and not _holds_receipt(pins, receipt.receipt_sha256):
        return _derive_unchanged(canonical, pins, receipt)
    body, prior, new = _pin_move(canonical, pins, receipt, ("advanced", "unchanged"))
    if (body.status == "unchanged") != (prior == new) or (body.status == "advanced" and new.seq <= prior.seq):
        msg = f"pin record {receipt.receipt_sha256[:12]} says {body.status} from {prior} to {new}"
        raise _fail(msg)
    derived = PinReceipt.make(body.canonical, body.binding or "", prior, new, body.status)
    if derived != receipt:
        msg = "the pin receipt does not match what the journals prove"
        raise _fail(msg)
    return derived


def _holds_receipt(pins: SessionJournal, receipt_sha256: str) -> bool:
    return any(isinstance(r.body, MemoryPinMoved) and r.body.receipt == receipt_sha256 for r in pins.read())


def _derive_unchanged(canonical: SessionJournal, pins: SessionJournal, receipt: PinReceipt) -> PinReceipt:
    pin = receipt.prior
    _check_heads(canonical, pin)
    held = pin == _head_at(canonical, 1) or any(
        isinstance(r.body, MemoryPinMoved)
        and r.body.canonical == receipt.authority
        and Head(r.body.new_seq, r.body.new_digest) == pin
        for r in pins.read()
    )
    if not held:
        msg = f"{pins.name} never recorded the pin of {receipt.authority} at {pin}: no such unchanged call"
        raise _fail(msg)
    derived = PinReceipt.make(receipt.authority, binding_of(_header(canonical)), pin, pin, "unchanged")
    if derived != receipt:
        msg = "the pin receipt does not match what the journals prove"
        raise _fail(msg)
    return derived


def derive_adoption_receipt(
    canonical: SessionJournal, pins: SessionJournal, receipt: AdoptionReceipt
) -> AdoptionReceipt:
    """The adoption receipt (adopted or already-present) as the journals prove it."""
    _check_authority(canonical, receipt.authority)
    body, prior, new = _pin_move(canonical, pins, receipt, ("adopted", "already-present"))
    if new.seq < prior.seq:
        msg = f"pin record {receipt.receipt_sha256[:12]} moves the pin back from {prior} to {new}"
        raise _fail(msg)
    if body.status == "adopted":
        operation = _adoption(canonical, body.operation or "")
        opened = operation.body
        assert isinstance(opened, MemoryAdoption)
        derived = AdoptionReceipt.make(
            actor=opened.actor,
            authority=body.canonical,
            binding=opened.binding,
            nomination=opened.nomination,
            prior=Head(opened.prior_seq, opened.prior_digest),
            new=_operation_end(canonical, operation),
            status="adopted",
            operation=operation.id,
            operation_digest=operation.digest,
        )
        if derived.new != new or (body.actor, body.binding, body.nomination) != (
            derived.actor,
            derived.binding,
            derived.nomination,
        ):
            msg = f"pin record {receipt.receipt_sha256[:12]} does not match adoption {operation.id}"
            raise _fail(msg)
    else:
        derived = AdoptionReceipt.make(
            actor=body.actor or "",
            authority=body.canonical,
            binding=body.binding or "",
            nomination=body.nomination or "",
            prior=prior,
            new=new,
            status="already-present",
            operation=None,
            operation_digest=None,
        )
    if derived != receipt:
        msg = "the adoption receipt does not match what the journals prove"
        raise _fail(msg)
    return derived


def _adoption(canonical: SessionJournal, operation: str) -> Record:
    for record in canonical.read():
        if record.id == operation and isinstance(record.body, MemoryAdoption):
            return record
    msg = f"no adoption record {operation!r} in {canonical.name}"
    raise _fail(msg)


def _operation_end(canonical: SessionJournal, operation: Record) -> Head:
    body = operation.body
    assert isinstance(body, MemoryAdoption)
    writes = list(canonical.read(after=operation.seq, limit=body.writes))
    if len(writes) != body.writes or not all(
        isinstance(w.body, MemoryWrite | MemoryDelete) and w.body.call_id == body.operation for w in writes
    ):
        msg = f"adoption {body.operation} is not followed by its {body.writes} writes"
        raise _fail(msg)
    if _head_at(canonical, body.prior_seq) != Head(body.prior_seq, body.prior_digest) or (
        body.prior_seq != operation.seq - 1
    ):
        msg = f"adoption {body.operation} names a prior head the journal does not have before it"
        raise _fail(msg)
    return Head.of(writes[-1])


def derive_remember_receipt(working: SessionJournal, receipt: RememberReceipt) -> RememberReceipt:
    """A remember receipt as the working journal proves it: the request's records, first to last."""
    header = _header(working)
    if header.role != "working_memory" or header.journal != receipt.authority:
        msg = f"the receipt names {receipt.authority!r}; {working.name} is {header.journal!r} ({header.role})"
        raise _fail(msg)
    seqs = [r.seq for r in working.read() if getattr(r.body, "call_id", None) == receipt.request_id]
    if not seqs:
        msg = f"{working.name} holds no records of request {receipt.request_id!r}"
        raise _fail(msg)
    derived = remember_receipt(header.journal, receipt.request_id, seqs[0], _head_at(working, seqs[-1]))
    if derived != receipt:
        msg = "the remember receipt does not match what the working journal proves"
        raise _fail(msg)
    return derived


def derive_tool_receipt(working: SessionJournal, receipt: Receipt) -> Receipt:
    """A Memory port receipt as the working journal proves it: the record at its seq, its call, its
    content digest and the links the write dropped."""
    header = _header(working)
    if header.journal != receipt.journal:
        msg = f"the receipt names journal {receipt.journal!r}; {working.name} is {header.journal!r}"
        raise _fail(msg)
    record = next(iter(working.read(after=receipt.seq - 1, limit=1)), None)
    if record is None or Head.of(record) != Head(receipt.seq, receipt.digest):
        msg = f"{working.name} does not have record {receipt.seq} with digest {receipt.digest[:12]}"
        raise _fail(msg)
    body = record.body
    call_id = getattr(body, "call_id", None)
    content = body.digest if isinstance(body, MemoryWrite) else None
    dropped: tuple[str, ...] = ()
    if isinstance(body, MemoryWrite | MemoryDelete):
        first = receipt.seq
        for earlier in working.read(after=max(receipt.seq - 2, 0), limit=1):
            if earlier.seq < receipt.seq and getattr(earlier.body, "call_id", None) == call_id and call_id:
                first = earlier.seq  # an eviction before the write belongs to the same command
        before = replay(MemoryProjection(), working, at=first - 1)
        if isinstance(body, MemoryWrite):
            old = before.files.get(body.path)
            dropped = tuple(sorted(links_of(old.text) - links_of(body.text))) if old else ()
        elif body.reason == "delete":
            gone = [before.files[p] for p in body.paths if p in before.files]
            dropped = tuple(sorted(set().union(*(links_of(f.text) for f in gone))))
    derived = Receipt(header.journal, record.seq, record.digest, content, call_id, dropped)
    if derived != receipt:
        msg = "the memory tool receipt does not match what the working journal proves"
        raise _fail(msg)
    return derived


@attrs.frozen
class ReceiptCheck:
    """The check of one receipt a journal holds: `ok` True, False (with `problem`), or None when the
    journal it names was not given."""

    journal: str
    seq: int
    kind: str
    ok: bool | None
    problem: str | None = None


def holds_receipts(records: Iterable[Record]) -> bool:
    """Whether `records` hold anything `check_receipts` checks (a pin record, a tool result's
    `memory_receipt`): the question without building a check of each."""
    return any(
        isinstance(body, MemoryPinMoved)
        or (
            isinstance(body, ToolResult)
            and isinstance(body.details, dict)
            and "memory_receipt" in body.details
        )
        for body in (record.body for record in records)
    )


def check_receipts(journal: SessionJournal, others: Mapping[str, SessionJournal]) -> list[ReceiptCheck]:
    """Check every receipt in `journal` (a session or pin journal): each host call's pin record against
    the canonical journal it names, and each Memory port receipt kept in a tool result against its
    working journal. `others` maps header journal ids to journals. Pin records must also chain: each
    starts where the last one for its canonical journal ended (the first at the canonical header)."""
    checks = []
    last: dict[str, Head] = {}
    for record in journal.read():
        body = record.body
        if isinstance(body, MemoryPinMoved):
            target = others.get(body.canonical)
            kind = f"memory host call ({body.status})"
            action: Callable[[SessionJournal], object] = partial(
                _check_pin_record, journal, body, last.get(body.canonical)
            )
            last[body.canonical] = Head(body.new_seq, body.new_digest)
        elif (
            isinstance(body, ToolResult)
            and isinstance(body.details, dict)
            and "memory_receipt" in body.details
        ):
            raw = body.details["memory_receipt"]
            receipt = _tool_receipt(raw)
            target = others.get(receipt.journal) if receipt is not None else None
            kind = "memory tool receipt"
            if receipt is None:
                checks.append(ReceiptCheck(journal.name, record.seq, kind, False, "malformed memory_receipt"))
                continue
            action = partial(derive_tool_receipt, receipt=receipt)
        else:
            continue
        if target is None:
            checks.append(ReceiptCheck(journal.name, record.seq, kind, None))
            continue
        try:
            action(target)
        except IntegrityError as exc:
            checks.append(ReceiptCheck(journal.name, record.seq, kind, False, str(exc)))
        else:
            checks.append(ReceiptCheck(journal.name, record.seq, kind, True))
    return checks


def _check_pin_record(
    pins: SessionJournal, body: MemoryPinMoved, last: Head | None, canonical: SessionJournal
) -> None:
    prior, new = Head(body.prior_seq, body.prior_digest), Head(body.new_seq, body.new_digest)
    start = last if last is not None else _head_at(canonical, 1)
    if prior != start:
        msg = f"this host call starts at {prior}, but the pin was {start} (the pin records do not chain)"
        raise _fail(msg)
    if body.status in ("advanced", "unchanged"):
        pin = PinReceipt(body.canonical, body.binding or "", prior, new, body.status, body.receipt)  # type: ignore[arg-type]
        derive_pin_receipt(canonical, pins, pin)
        return
    adoption = AdoptionReceipt(
        body.actor or "",
        body.canonical,
        body.binding or "",
        body.nomination or "",
        prior if body.status == "already-present" else _adoption_prior(canonical, body),
        new,
        body.status,  # type: ignore[arg-type]
        body.operation,
        body.operation_digest,
        body.receipt,
    )
    derive_adoption_receipt(canonical, pins, adoption)


def _adoption_prior(canonical: SessionJournal, body: MemoryPinMoved) -> Head:
    opened = _adoption(canonical, body.operation or "").body
    assert isinstance(opened, MemoryAdoption)
    return Head(opened.prior_seq, opened.prior_digest)


def _tool_receipt(raw: object) -> Receipt | None:
    if not isinstance(raw, dict):
        return None
    try:
        return Receipt(
            journal=str(raw["journal"]),
            seq=int(raw["seq"]),
            digest=str(raw["digest"]),
            content_digest=raw.get("content_digest"),
            call_id=raw.get("call_id"),
            dropped_links=tuple(raw.get("dropped_links") or ()),
        )
    except (KeyError, TypeError, ValueError):
        return None


__all__ = [
    "ReceiptCheck",
    "check_receipts",
    "derive_adoption_receipt",
    "derive_pin_receipt",
    "derive_remember_receipt",
    "derive_tool_receipt",
    "remember_receipt",
]
