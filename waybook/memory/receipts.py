"""Receipts are projections too: recompute any authority receipt from the journals and check it.

An adoption record names its actor, binding, nomination and prior head, and the writes that follow it
complete the operation, so `derive_adoption_receipt` rebuilds the receipt from the canonical journal
alone and compares every field and the `receipt_sha256`. A pin receipt is checked by proving both heads
are in the canonical journal.
"""

from __future__ import annotations

from waybook.journal.errors import IntegrityError
from waybook.journal.head import GENESIS, Head
from waybook.journal.protocol import SessionJournal
from waybook.journal.records import MemoryAdoption, MemoryWrite
from waybook.memory.outcomes import AdoptionReceipt, PinReceipt


def _head_at(journal: SessionJournal, seq: int) -> Head:
    if seq == 0:
        return GENESIS
    record = next(journal.read(after=seq - 1, limit=1), None)
    if record is None:
        msg = f"{journal.name} has no seq {seq}"
        raise IntegrityError(msg)
    return Head.of(record)


def derive_adoption_receipt(canonical: SessionJournal, receipt: AdoptionReceipt) -> AdoptionReceipt:
    """The receipt as the canonical journal proves it; IntegrityError if `receipt` differs in anything."""
    if receipt.status == "adopted":
        operation = next((r for r in canonical.read() if r.id == receipt.operation), None)
        if operation is None or not isinstance(operation.body, MemoryAdoption):
            msg = f"no adoption record {receipt.operation} in {canonical.name}"
            raise IntegrityError(msg)
        body = operation.body
        writes = list(canonical.read(after=operation.seq, limit=body.writes))
        if len(writes) != body.writes or not all(
            isinstance(w.body, MemoryWrite) and w.body.call_id == body.operation for w in writes
        ):
            msg = f"adoption {body.operation} is not followed by its {body.writes} writes"
            raise IntegrityError(msg)
        new = Head.of(writes[-1]) if writes else Head.of(operation)
        derived = AdoptionReceipt.make(
            actor=body.actor,
            authority=receipt.authority,
            binding=body.binding,
            nomination=body.nomination,
            prior=Head(body.prior_seq, body.prior_digest),
            new=new,
            status="adopted",
            operation=body.operation,
            operation_digest=operation.digest,
        )
        if _head_at(canonical, body.prior_seq) != derived.prior:
            msg = f"adoption {body.operation} names a prior head the journal does not have"
            raise IntegrityError(msg)
    else:
        for head in (receipt.prior, receipt.new):
            if _head_at(canonical, head.seq) != head:
                msg = f"{canonical.name} does not have head {head}"
                raise IntegrityError(msg)
        derived = AdoptionReceipt.make(
            actor=receipt.actor,
            authority=receipt.authority,
            binding=receipt.binding,
            nomination=receipt.nomination,
            prior=receipt.prior,
            new=receipt.new,
            status="already-present",
            operation=None,
            operation_digest=None,
        )
    if derived != receipt:
        msg = "the receipt does not match what the canonical journal proves"
        raise IntegrityError(msg)
    return derived


def derive_pin_receipt(canonical: SessionJournal, receipt: PinReceipt) -> PinReceipt:
    for head in (receipt.prior, receipt.new):
        if _head_at(canonical, head.seq) != head:
            msg = f"{canonical.name} does not have head {head}"
            raise IntegrityError(msg)
    derived = PinReceipt.make(receipt.authority, receipt.binding, receipt.prior, receipt.new, receipt.status)
    if derived != receipt:
        msg = "the pin receipt does not match what the canonical journal proves"
        raise IntegrityError(msg)
    return derived
