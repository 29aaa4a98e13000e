"""Issue 40, point 4: the authority's public values as the design names them."""

from __future__ import annotations

import pytest

from tests.helpers.authority import foreign_write, nominate, pin_of
from waybook.journal import InMemoryJournal
from waybook.memory import (
    AUTHORITY_LIMITS,
    OH_MEMORY_AUTHORITY_LIMITS_V1,
    AdoptionConflict,
    AdoptionConflictError,
    RequestError,
    Route,
    create_authority,
    load_index,
    render_index,
)


def test_the_limits_are_one_public_constant() -> None:
    assert OH_MEMORY_AUTHORITY_LIMITS_V1 is AUTHORITY_LIMITS
    assert (AUTHORITY_LIMITS.max_proof_records, AUTHORITY_LIMITS.max_conflicts) == (16_384, 128)
    assert (AUTHORITY_LIMITS.page_bytes, AUTHORITY_LIMITS.max_canonical_records) == (64 << 20, 8_192)


def test_the_adoption_conflict_is_one_object() -> None:
    canonical = InMemoryJournal("c")
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=canonical,
        routes=[Route("shared", frozenset({"facts"}))],
        actor="h",
        pins=InMemoryJournal("p"),
    )
    nomination = nominate(authority, {"/memories/a.md": "x"})
    foreign_write(canonical, "/memories/a.md", "y")
    with pytest.raises(AdoptionConflictError) as caught:
        authority.host.adopt_nomination(pin_of(authority), nomination)
    conflict = caught.value.conflict
    assert isinstance(conflict, AdoptionConflict)
    assert (conflict.total, conflict.truncated, conflict.expected) == (1, False, pin_of(authority))
    assert conflict.conflicts[0][0] == "/memories/a.md"
    assert len(conflict.conflicts_sha256) == 64


def test_a_malformed_request_is_a_type_error() -> None:
    authority = create_authority(
        working=InMemoryJournal("w"),
        canonical=InMemoryJournal("c"),
        routes=[],
        actor="h",
        pins=InMemoryJournal("p"),
    )
    with pytest.raises(TypeError):
        authority.host.advance_canonical("not a head", "nor this")  # type: ignore[arg-type]
    assert issubclass(RequestError, TypeError)
    assert issubclass(RequestError, ValueError)  # as it was


def test_render_index_and_load_index_are_public() -> None:
    assert render_index.__module__.startswith("waybook.memory")
    assert load_index.__module__.startswith("waybook.memory")
