"""Issue 40, point 3: an adoption's proofs are bounded like advance_canonical's, and host calls that
change nothing write nothing."""

from __future__ import annotations

import pytest

from tests.helpers.authority import nominate, pin_of
from tests.helpers.builders import AT
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import Route, create_authority
from waybook.memory.canonical.receipts import derive_adoption_receipt, derive_pin_receipt
from waybook.model import CapacityError, Head, MemoryWrite, NewRecord

ROUTES = [Route("shared", frozenset({"facts"}))]


def journals() -> tuple[InMemoryJournal, InMemoryJournal, InMemoryJournal]:
    return InMemoryJournal("w"), InMemoryJournal("c"), InMemoryJournal("p")


def foreign_writes(canonical: InMemoryJournal, count: int, *, also: dict[str, str] | None = None) -> None:
    """`count` writes straight into canonical memory (another host), the notes of `also` among them."""
    batch = []
    for i in range(count):
        text = f"fact {i}"
        body = MemoryWrite(path=f"/memories/c{i % 50}.md", text=text, digest=content_digest(text))
        batch.append(NewRecord(id=f"f{i}", at=AT, body=body))
    for path, text in (also or {}).items():
        batch.append(
            NewRecord(
                id=f"f-{len(batch)}",
                at=AT,
                body=MemoryWrite(path=path, text=text, digest=content_digest(text)),
            )
        )
    for start in range(0, len(batch), 1_000):
        chunk = batch[start : start + 1_000]
        canonical.append(chunk, expected=canonical.head())


def test_an_already_present_adoption_does_not_move_the_pin_past_the_proof_bound() -> None:
    working, canonical, pins = journals()
    authority = create_authority(working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins)
    nomination = nominate(authority, {"/memories/a.md": "x"})
    foreign_writes(canonical, 20_001, also={"/memories/a.md": "x"})  # in place, 20,002 records ahead
    pin, recorded = pin_of(authority), pins.head()
    with pytest.raises(CapacityError, match=r"^The canonical memory advance exceeds its total proof bound"):
        authority.host.adopt_nomination(pin, nomination)
    assert (pin_of(authority), pins.head()) == (pin, recorded)
    middle = Head.of(next(iter(canonical.read(after=pin.seq + 16_383, limit=1))))
    moved = authority.host.advance_canonical(pin, middle).new  # the host reviews in chunks
    receipt = authority.host.adopt_nomination(moved, nomination)
    assert (receipt.status, receipt.new) == ("already-present", canonical.head())
    assert derive_adoption_receipt(canonical, pins, receipt) == receipt


def test_an_adoption_followed_by_writes_past_the_bound_does_not_prove_them_all() -> None:
    working, canonical, pins = journals()

    class Late:
        """A canonical journal that lets another host write 20,001 records right after the adoption."""

        def __init__(self, inner: InMemoryJournal) -> None:
            self.inner, self.armed = inner, False

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

        def append(self, records: object, *, expected: object) -> object:
            result = self.inner.append(records, expected=expected)  # type: ignore[arg-type]
            if self.armed:
                self.armed = False
                foreign_writes(self.inner, 20_001)
            return result

    late = Late(canonical)
    authority = create_authority(working=working, canonical=late, routes=ROUTES, actor="h", pins=pins)  # type: ignore[arg-type]
    nomination = nominate(authority, {"/memories/a.md": "x"})
    pin = pin_of(authority)
    late.armed = True
    with pytest.raises(CapacityError, match=r"^The canonical memory advance exceeds its total proof bound"):
        authority.host.adopt_nomination(pin, nomination)
    assert pin_of(authority) == pin


def test_unchanged_advances_and_repeated_adoptions_write_nothing() -> None:
    working, canonical, pins = journals()
    authority = create_authority(working=working, canonical=canonical, routes=ROUTES, actor="h", pins=pins)
    nomination = nominate(authority, {"/memories/a.md": "x"})
    adopted = authority.host.adopt_nomination(pin_of(authority), nomination)
    recorded = pins.head()
    for _ in range(100):
        unchanged = authority.host.advance_canonical(adopted.new, adopted.new)
    assert unchanged.status == "unchanged"
    assert derive_pin_receipt(canonical, pins, unchanged) == unchanged
    for _ in range(10):
        present = authority.host.adopt_nomination(adopted.new, nomination)
    assert present.status == "already-present"
    assert derive_adoption_receipt(canonical, pins, present) == present
    assert pins.head().seq <= recorded.seq + 1, "calls that change nothing wrote pin records"
