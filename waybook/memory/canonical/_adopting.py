"""Adopting a nomination into canonical memory: one compare-and-append, then the pin record.

Checked in order: route and purpose, source and binding, the working journal's re-export of the closure,
then each nominated record against the canonical head (missing: a put; same digest: nothing; different,
or a tombstone of a present key: a conflict unless `replacements` names the key with the exact canonical
digest). The write happens only when the expected head, the pin and the canonical head agree.

Losing the race (a stale head, the same operation committed by another authority, any conflict from the
commit) means rereading: the result is `already-present` if every nominated record is in place, else an
adoption conflict. Writes that land after ours are proven to follow it, and the nominated records are
checked at that later head: in place means the pin moves there (`already-present`), changed means an
adoption conflict.
"""

from __future__ import annotations

import hashlib
from typing import Final

from waybook.codecs import seal
from waybook.journal import byte_length, utc_now
from waybook.memory._errors import AUTHORITY_LIMITS, AdoptionConflictError, ProfileError, RequestError
from waybook.memory.canonical._advancing import pin_record, proven_view
from waybook.memory.canonical._core import Core
from waybook.memory.canonical._nominations import NominatedRecord, Nomination, closure, nomination_digest
from waybook.memory.canonical._outcomes import AdoptionReceipt
from waybook.memory.working import MemoryProjection, MemoryState
from waybook.model import (
    CapacityError,
    ConflictError,
    Head,
    IntegrityError,
    MemoryAdoption,
    MemoryDelete,
    MemoryWrite,
    NewRecord,
    Record,
)
from waybook.projections import replay

MAX_CANONICAL_RECORDS: Final = AUTHORITY_LIMITS.max_canonical_records
MAX_CANONICAL_BYTES: Final = AUTHORITY_LIMITS.max_canonical_bytes
Conflict = tuple[str, str | None, str | None]

# The design's messages (docs/canonical-memory.md): each error's message starts with its text.
FOREIGN_NOMINATION: Final = "The memory nomination is not from the bound working authority"
NOT_REEXPORTED: Final = "The working authority did not re-export the nominated closure exactly"
DIFFERENT_OPERATION: Final = "The canonical authority returned a different adoption operation"
ADOPTION_CAPACITY: Final = "The adoption exceeds the capacity of canonical memory"


def adopt(
    core: Core, expected: Head, nomination: Nomination, replacements: tuple[tuple[str, str], ...]
) -> AdoptionReceipt:
    core.check_route(nomination.route, nomination.purpose)
    if nomination.source != core.working_id or nomination.binding != core.binding:
        msg = (
            f"{FOREIGN_NOMINATION}: it names working journal {nomination.source!r}, this authority's is "
            f"{core.working_id!r} (or its binding differs); nominate from this authority's agent face"
        )
        raise ProfileError(msg)
    check_reexport(core, nomination)
    pin, view = core.sync_pin()
    core.canonical_live.refresh()
    state = core.canonical_live.state
    current = Head(state.seq, state.digest)
    replace = dict(replacements)
    changes: list[tuple[NominatedRecord, str | None]] = []
    conflicts: list[Conflict] = []
    for record in nomination.records:
        existing = state.files.get(record.key)
        held = existing.digest if existing else None
        if held == record.digest:
            continue
        if held is not None and replace.get(record.key) == held:
            changes.append((record, held))
        elif held is None and record.key not in replace:
            changes.append((record, None))
        else:
            conflicts.append((record.key, held, record.digest))
    if not changes and not conflicts:
        return already_present(core, nomination, pin, view, current)
    if not (expected == pin == current):
        raise AdoptionConflictError(
            expected=expected,
            actual=current,
            conflicts=conflicts or [(r.key, held, r.digest) for r, held in changes],
            reason="the expected head, the pin and the canonical head do not agree",
        )
    if conflicts:
        raise AdoptionConflictError(
            expected=expected, actual=current, conflicts=conflicts, reason="canonical records differ"
        )
    _check_capacity(state, changes)
    operation = operation_id(core, nomination, current)
    batch = _batch(core, nomination, operation, current, changes)
    try:
        result = core.canonical.append(batch, expected=current)  # exactly one attempt
    except ConflictError:
        return _reconcile(core, expected, nomination, pin, view)
    sent = _sealed(batch, current)
    if result.prior != current or [(r.id, r.seq, r.digest) for r in result.records] != [
        (r.id, r.seq, r.digest) for r in sent
    ]:
        msg = (
            f"{DIFFERENT_OPERATION}: {core.canonical_id} did not commit the operation that was sent (its "
            "reply names other records, seqs or digests than the batch sealed on the expected head)"
        )
        raise IntegrityError(msg)
    core.canonical_live.refresh()
    later = Head(core.canonical_live.state.seq, core.canonical_live.state.digest)
    if later != result.head:
        return _after_later_writes(core, expected, nomination, pin, view, later)
    new_view = proven_view(core, pin, view, result.head)
    return _move_pin(
        core,
        new_view,
        nomination,
        pin,
        result.head,
        prior=current,
        operation=operation,
        operation_digest=sent[0].digest,
    )


def _sealed(batch: list[NewRecord], prior: Head) -> list[Record]:
    """The records `batch` becomes when appended on `prior`: what the journal's reply must name."""
    sealed: list[Record] = []
    prev = prior.digest
    for index, new in enumerate(batch, start=1):
        record, _ = seal(prior.seq + index, new, prev, (index, len(batch)) if len(batch) > 1 else None)
        sealed.append(record)
        prev = record.digest
    return sealed


def operation_id(core: Core, nomination: Nomination, prior: Head) -> str:
    """`memory_adopt_` and 48 hex characters from the actor, binding, nomination and prior head."""
    parts = [core.actor, core.binding, nomination.digest, str(prior.seq), prior.digest]
    return "memory_adopt_" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:48]


def _batch(
    core: Core,
    nomination: Nomination,
    operation: str,
    current: Head,
    changes: list[tuple[NominatedRecord, str | None]],
) -> list[NewRecord]:
    at = utc_now()
    puts = [(r, held) for r, held in changes if r.digest is not None]
    gone = tuple(r.key for r, _ in changes if r.digest is None)
    bodies: list[MemoryWrite | MemoryDelete] = [
        MemoryWrite(
            path=r.key,
            text=r.text or "",
            digest=r.digest or "",
            prior=held,
            command="adopt",
            call_id=operation,
        )
        for r, held in puts
    ]
    if gone:
        bodies.append(MemoryDelete(paths=gone, reason="adopt", call_id=operation))
    adoption = MemoryAdoption(
        operation=operation,
        actor=core.actor,
        binding=core.binding,
        nomination=nomination.digest,
        source=nomination.source,
        source_seq=nomination.source_head.seq,
        source_digest=nomination.source_head.digest,
        prior_seq=current.seq,
        prior_digest=current.digest,
        writes=len(bodies),
        replaced=tuple(sorted(r.key for r, held in changes if held)),
    )
    return [
        NewRecord(id=operation, at=at, body=adoption),
        *(NewRecord(id=f"{operation}:{i}", at=at, body=body) for i, body in enumerate(bodies, start=1)),
    ]


def _check_capacity(state: MemoryState, changes: list[tuple[NominatedRecord, str | None]]) -> None:
    files = len(state.files)
    grown = state.total_bytes
    for record, held in changes:
        old = state.files[record.key].size if held else 0
        if record.digest is None:
            files -= 1
            grown -= old
        else:
            files += 0 if held else 1
            grown += byte_length(record.text or "") - old
    if files > MAX_CANONICAL_RECORDS or grown > MAX_CANONICAL_BYTES:
        msg = (
            f"{ADOPTION_CAPACITY}: adopting would grow canonical memory to {files} records and {grown} "
            "bytes; the limits are "
            f"{MAX_CANONICAL_RECORDS} records and {MAX_CANONICAL_BYTES} bytes"
        )
        raise CapacityError(msg)


def _in_place(state: MemoryState, nomination: Nomination) -> list[Conflict]:
    """The nominated records that `state` does not hold as nominated, with what it holds instead."""
    out: list[Conflict] = []
    for r in nomination.records:
        file = state.files.get(r.key)
        held = file.digest if file else None
        if held != r.digest:
            out.append((r.key, held, r.digest))
    return out


def _reconcile(
    core: Core, expected: Head, nomination: Nomination, pin: Head, view: MemoryState
) -> AdoptionReceipt:
    """The commit lost to another writer: already-present if every nominated record is in place."""
    core.canonical_live.refresh()
    later = core.canonical_live.state
    head = Head(later.seq, later.digest)
    differ = _in_place(later, nomination)
    if not differ:
        return already_present(core, nomination, pin, view, head)
    raise AdoptionConflictError(
        expected=expected,
        actual=head,
        conflicts=differ,
        reason="another writer changed canonical memory during the adoption",
    )


def _after_later_writes(
    core: Core, expected: Head, nomination: Nomination, pin: Head, view: MemoryState, later: Head
) -> AdoptionReceipt:
    """Our adoption committed and other writes followed: prove the path through ours to the later head
    (however long), then check the nominated records there."""
    new_view = proven_view(core, pin, view, later)
    differ = _in_place(new_view, nomination)
    if differ:
        raise AdoptionConflictError(
            expected=expected,
            actual=later,
            conflicts=differ,
            reason="a write that landed after the adoption changed nominated records",
        )
    return already_present(core, nomination, pin, view, later, new_view)


def already_present(
    core: Core,
    nomination: Nomination,
    pin: Head,
    view: MemoryState,
    current: Head,
    new_view: MemoryState | None = None,
) -> AdoptionReceipt:
    """Every nominated record is in canonical memory at `current`: move the pin there, record it."""
    if new_view is None:
        new_view = view if current == pin else proven_view(core, pin, view, current)
    return _move_pin(core, new_view, nomination, pin, current, prior=pin)


def _move_pin(
    core: Core,
    new_view: MemoryState,
    nomination: Nomination,
    pin: Head,
    new: Head,
    *,
    prior: Head,
    operation: str | None = None,
    operation_digest: str | None = None,
) -> AdoptionReceipt:
    """Install `new_view` and move the pin from `pin` to `new` for `nomination`: adopted by `operation`
    (with the digest of its first record), written on canonical head `prior`, or already present (no
    operation; `prior` is the pin). Returns the receipt; the pin record is made from it."""
    status = "already-present" if operation is None else "adopted"
    receipt = AdoptionReceipt.make(
        actor=core.actor,
        authority=core.canonical_id,
        binding=core.binding,
        nomination=nomination.digest,
        prior=prior,
        new=new,
        status=status,
        operation=operation,
        operation_digest=operation_digest,
    )
    core.install(new_view, pin_record(core, pin, receipt))
    return receipt


def check_reexport(core: Core, nomination: Nomination) -> None:
    """The working journal must export exactly this closure at the nomination's source head."""
    source = replay(MemoryProjection(), core.working, at=nomination.source_head.seq)
    if Head(source.seq, source.digest) != nomination.source_head:
        head = nomination.source_head
        msg = f"{NOT_REEXPORTED}: {core.working_id} lacks head {head}; the nomination is from another history"
        raise IntegrityError(msg)
    try:
        records = closure(source, nomination.roots)
    except (RequestError, CapacityError) as exc:
        msg = f"{NOT_REEXPORTED}: {exc}"
        raise IntegrityError(msg) from exc
    digest = nomination_digest(
        route=nomination.route,
        purpose=nomination.purpose,
        source=nomination.source,
        binding=nomination.binding,
        head=nomination.source_head,
        roots=nomination.roots,
        records=records,
    )
    if records != nomination.records or digest != nomination.digest:
        msg = f"{NOT_REEXPORTED}: the closure differs from what {core.working_id} exports at its source head"
        raise IntegrityError(msg)
