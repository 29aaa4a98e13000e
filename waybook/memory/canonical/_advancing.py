"""Moving the pin: `advance_canonical`, and the proof that canonical memory grew from the pin to a head.

The feed from the pin to the next head is read in bounded pages, each record proven to follow the one
before; the feed must end exactly at the next head, and that head must not lie inside an adoption (a
head names one whole operation). Only then is the pin record written, and only after it has committed
does the pin move.
"""

from __future__ import annotations

from typing import Final

from waybook.journal import check_line
from waybook.memory._errors import AUTHORITY_LIMITS
from waybook.memory.canonical._core import Core
from waybook.memory.canonical._outcomes import AdoptionReceipt, PinReceipt
from waybook.memory.working import MemoryProjection, MemoryState
from waybook.model import (
    CapacityError,
    ConflictError,
    Head,
    IntegrityError,
    JournalError,
    MemoryPinMoved,
    Record,
)

MAX_ADVANCE_RECORDS: Final = AUTHORITY_LIMITS.max_proof_records
MAX_PAGES: Final = AUTHORITY_LIMITS.max_pages
PAGE_RECORDS: Final = AUTHORITY_LIMITS.page_records
PAGE_BYTES: Final = AUTHORITY_LIMITS.page_bytes

# The design's messages (docs/canonical-memory.md): each error's message starts with its text.
EXPECTED_MISMATCH: Final = "The expected canonical memory head does not match the current pin"
NOT_DESCENDANT: Final = "The next canonical memory head is not a descendant of the current pin"
PROOF_BOUND: Final = (
    "The canonical memory advance exceeds its total proof bound; advance in host-reviewed chunks"
)
MALFORMED_PAGE: Final = "The canonical change feed returned an invalid page"
PAGE_BOUND: Final = "The canonical change-feed page exceeds its byte bound"


def advance(core: Core, expected: Head, target: Head) -> PinReceipt:
    """The host's `advance_canonical`: the expected head first, then everything decided before the feed.

    A next head equal to the pin is `unchanged` when the expected head is the pin, or when it is the head
    the pin moved from to get there (the retry of a move whose pin record committed but whose reply was
    lost). Any other expected head is a conflict, even with a next head equal to the pin.
    """
    pin, view = core.sync_pin()
    if expected != pin and not (target == pin and expected == core.pin_log.arrived_from()):
        msg = (
            f"{EXPECTED_MISMATCH}: expected {expected}, the pin is {pin}; nothing changed. Read the pin "
            "again and advance from it"
        )
        raise ConflictError(msg)
    if target == pin:  # nothing changes, so nothing is written (derive_pin_receipt proves it from the pin)
        return PinReceipt.make(core.canonical_id, core.binding, pin, pin, "unchanged")
    if target.seq <= pin.seq:
        msg = (
            f"{NOT_DESCENDANT}: next head {target}, the pin is {pin} (a rollback or a fork); nothing changed"
        )
        raise ConflictError(msg)
    check_bound(pin, target)
    new_view = proven_view(core, pin, view, target)
    receipt = PinReceipt.make(core.canonical_id, core.binding, pin, target, "advanced")
    core.install(new_view, pin_record(core, pin, receipt))
    return receipt


def check_bound(pin: Head, target: Head) -> None:
    """CapacityError (decided before the feed is read) when moving the pin would prove more than
    MAX_ADVANCE_RECORDS records: an advance, and an adoption's move past later writes alike."""
    if target.seq - pin.seq > MAX_ADVANCE_RECORDS:
        msg = (
            f"{PROOF_BOUND}: moving the pin from seq {pin.seq} to {target.seq} would prove "
            f"{target.seq - pin.seq} records; at most {MAX_ADVANCE_RECORDS} per call"
        )
        raise CapacityError(msg)


def proven_view(core: Core, pin: Head, view: MemoryState, target: Head) -> MemoryState:
    """Read the canonical feed from `pin` to `target` in pages, prove it, and fold it onto `view`.

    A gap, a malformed record or a different end is an IntegrityError; a feed whose pages are so short
    that `max_pages` of them do not reach `target` is a CapacityError (advance in smaller chunks); a
    `target` inside an adoption is a ConflictError naming the head that ends it.
    """
    check_bound(pin, target)
    max_pages = MAX_PAGES
    name = core.canonical_id
    seq, prev = pin.seq, pin.digest
    records: list[Record] = []
    pages = 0
    while seq < target.seq:
        if pages == max_pages:
            msg = (
                f"{PROOF_BOUND}: {name}: {max_pages} pages of the feed reach seq {seq}, not the next "
                f"head {target}; advance in smaller reviewed chunks"
            )
            raise CapacityError(msg)
        pages += 1
        lines = read_page(core, seq, min(PAGE_RECORDS, target.seq - seq))
        if not lines:
            msg = f"{name}: the feed ends at seq {seq}, before the next head {target} (a gap)"
            raise IntegrityError(msg)
        for line in lines:
            try:
                record = check_line(line, seq + 1, prev, name)
            except JournalError as exc:
                msg = f"{name}: malformed feed at seq {seq + 1}: {exc}"
                raise IntegrityError(msg) from exc
            records.append(record)
            seq, prev = record.seq, record.digest
    if Head(seq, prev) != target:
        msg = f"{name}: the feed ends at {Head(seq, prev)}, not at the next head {target}"
        raise IntegrityError(msg)
    new_view = view.copy()  # O(1): the pin's view forks (MemoryState.shared); the fold costs the records
    projection = MemoryProjection()
    for record in records:
        projection.apply(new_view, record)
    if new_view.open_adoption is not None:
        end = target.seq + new_view.adoption_left
        msg = (
            f"{name}: head {target} lies inside adoption {new_view.open_adoption}; a head names one whole "
            f"operation. Advance to seq {end}, where it ends"
        )
        raise ConflictError(msg)
    return new_view


def read_page(core: Core, after: int, limit: int) -> list[bytes]:
    """One page of the canonical feed: at most `limit` records after seq `after`, read one by one.

    Bytes are counted as they are read: a page past PAGE_BYTES is refused (CapacityError) before the
    rest of it is read. A page that is not iterable, an item that is not the bytes of a record (a str,
    None, ...) or more records than asked for is an IntegrityError (the feed is malformed), never a bare
    TypeError. Errors the store raises itself pass through unchanged.
    """
    name = core.canonical_id
    try:
        items = iter(core.canonical.read_lines(after=after, limit=limit))
    except TypeError as exc:
        msg = f"{MALFORMED_PAGE}: {name}: the page after seq {after} is not iterable ({exc})"
        raise IntegrityError(msg) from None
    page: list[bytes] = []
    size = 0
    try:
        for item in items:
            if type(item) is not bytes:
                msg = (
                    f"{MALFORMED_PAGE}: {name}: record {after + len(page) + 1} of the feed is "
                    f"{type(item).__name__}, not the bytes of a record"
                )
                raise IntegrityError(msg)
            if len(page) == limit:
                msg = (
                    f"{MALFORMED_PAGE}: {name}: the page after seq {after} holds more than the {limit} "
                    "records asked for"
                )
                raise IntegrityError(msg)
            size += len(item)
            if size > PAGE_BYTES:
                msg = (
                    f"{PAGE_BOUND}: {name}: the page after seq {after} passed {PAGE_BYTES} bytes at record "
                    f"{after + len(page) + 1}; nothing changed"
                )
                raise CapacityError(msg)
            page.append(item)
    finally:
        close = getattr(items, "close", None)
        if callable(close):
            close()  # a refused page's generator stops reading now
    return page


def pin_record(core: Core, pin: Head, receipt: PinReceipt | AdoptionReceipt) -> MemoryPinMoved:
    """The record of one host call's outcome, moving the pin from `pin` to the receipt's new head: what
    the receipt is re-derived from (receipts.py), so every field it shares is taken from the receipt."""
    actor, nomination, operation, operation_digest = (
        (receipt.actor, receipt.nomination, receipt.operation, receipt.operation_digest)
        if isinstance(receipt, AdoptionReceipt)
        else (None, None, None, None)
    )
    return MemoryPinMoved(
        canonical=core.canonical_id,
        prior_seq=pin.seq,
        prior_digest=pin.digest,
        new_seq=receipt.new.seq,
        new_digest=receipt.new.digest,
        receipt=receipt.receipt_sha256,
        status=receipt.status,
        binding=core.binding,
        actor=actor,
        nomination=nomination,
        operation=operation,
        operation_digest=operation_digest,
    )
