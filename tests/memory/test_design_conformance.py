"""Issue 32: the points where the design was not followed (the expected head first, the design's messages)."""

from __future__ import annotations

from typing import Any

import pytest

from waybook.journal import InMemoryJournal
from waybook.memory import (
    AdoptionConflictError,
    ProfileError,
    RequestError,
    Route,
    create_authority,
)
from waybook.model import CapacityError, ConflictError, Head, StorageError

from .test_authority import Probe, foreign_write, nominate, pin_of

ROUTES = [Route("shared", frozenset({"facts"}))]


def journals() -> tuple[InMemoryJournal, InMemoryJournal, InMemoryJournal]:
    return InMemoryJournal("working"), InMemoryJournal("canonical"), InMemoryJournal("pins")


def authority(working: Any, canonical: Any, pins: Any) -> Any:
    return create_authority(working=working, canonical=canonical, routes=ROUTES, actor="host", pins=pins)


def test_a_wrong_expected_head_is_a_conflict_even_when_the_next_head_is_the_pin() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/a.md", "x")
    pin = pin_of(host)
    wrong = Head(canonical.head().seq, "e" * 64)
    with pytest.raises(ConflictError) as caught:
        host.host.advance_canonical(wrong, pin)
    assert str(caught.value).startswith("The expected canonical memory head does not match the current pin")
    assert pin_of(host) == pin


def test_a_stale_expected_head_that_never_led_to_the_pin_is_a_conflict_on_a_no_op_advance() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    start = pin_of(host)
    foreign_write(canonical, "/memories/a.md", "x")
    middle = host.host.advance_canonical(start, canonical.head()).new
    foreign_write(canonical, "/memories/b.md", "y")
    top = host.host.advance_canonical(middle, canonical.head()).new
    with pytest.raises(ConflictError, match=r"^The expected canonical memory head does not match"):
        host.host.advance_canonical(start, top)  # start is two moves back: not this move's expected head


def test_a_retry_after_a_lost_reply_with_its_own_expected_head_is_unchanged() -> None:
    working, canonical, inner = journals()
    pins = Probe(inner)
    host = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/a.md", "x")
    before = pin_of(host)
    pins.after_append = StorageError("reply lost")
    with pytest.raises(StorageError):
        host.host.advance_canonical(before, canonical.head())
    first = host.host.advance_canonical(before, canonical.head())
    second = host.host.advance_canonical(before, canonical.head())  # the retry of the retry too
    assert (first.status, second.status) == ("unchanged", "unchanged")
    assert host.host.advance_canonical(canonical.head(), canonical.head()).status == "unchanged"


def test_the_design_messages_start_each_refusal_of_an_advance() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    foreign_write(canonical, "/memories/a.md", "x")
    moved = host.host.advance_canonical(pin_of(host), canonical.head()).new
    with pytest.raises(ConflictError) as rollback:
        host.host.advance_canonical(moved, Head(1, canonical.head().digest))
    assert str(rollback.value).startswith(
        "The next canonical memory head is not a descendant of the current pin"
    )
    with pytest.raises(CapacityError) as capacity:
        host.host.advance_canonical(moved, Head(moved.seq + 16_385, "a" * 64))
    assert str(capacity.value).startswith(
        "The canonical memory advance exceeds its total proof bound; advance in host-reviewed chunks"
    )
    for expected, target in ((moved, "not a head"), (Head(-1, "a" * 64), moved), (moved, Head(2, "XY"))):
        with pytest.raises(RequestError) as invalid:
            host.host.advance_canonical(expected, target)
        assert str(invalid.value).startswith("Invalid canonical memory advance request")


def test_the_design_messages_start_each_refusal_of_an_adoption() -> None:
    working, canonical, pins = journals()
    host = authority(working, canonical, pins)
    nomination = nominate(host, {"/memories/a.md": "x"})
    with pytest.raises(RequestError) as invalid:
        host.host.adopt_nomination(pin_of(host), "not a nomination")
    assert str(invalid.value).startswith("Invalid memory adoption request")
    other = create_authority(
        working=InMemoryJournal("w2"),
        canonical=canonical,
        routes=[*ROUTES, Route("team", frozenset({"notes"}))],
        actor="host",
        pins=InMemoryJournal("p2"),
    )
    with pytest.raises(ProfileError) as foreign:
        other.host.adopt_nomination(pin_of(other), nomination)
    assert str(foreign.value).startswith("The memory nomination is not from the bound working authority")
    with pytest.raises(ProfileError) as route:
        host.agent.nominate(["/memories/a.md"], "team", "notes")
    assert str(route.value).startswith("The memory nomination is not bound to this adoption route")
    foreign_write(canonical, "/memories/a.md", "a different text")
    with pytest.raises(AdoptionConflictError) as conflict:
        host.host.adopt_nomination(pin_of(host), nomination)
    assert str(conflict.value).startswith(
        "The nominated records conflict with the current canonical memory head"
    )


def test_one_journal_as_both_memories_is_refused_with_the_design_message() -> None:
    same = InMemoryJournal("both")
    with pytest.raises(ProfileError) as caught:
        create_authority(working=same, canonical=same, routes=ROUTES, actor="h", pins=InMemoryJournal("p"))
    assert str(caught.value).startswith("Working and canonical memory must be distinct physical authorities")
