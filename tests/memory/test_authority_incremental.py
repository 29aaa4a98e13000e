"""Advancing the pin costs what changed, not what canonical memory holds (issue 40).

The view at the pin is kept in containers that fork in O(1) (waybook.memory.working._shared): an advance
folds only the records since the pin onto a fork of it, and the view the agent was reading stays whole.
Cost is measured by bench/memory.py (`authority.advance_one.*`); these tests pin what makes it so with
deterministic measures: the bytes an advance allocates, and the fold's result.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.builders import AT
from waybook.journal import InMemoryJournal
from waybook.journal._roles.memory_text import content_digest
from waybook.memory import MemoryProjection, Route, create_authority
from waybook.memory.canonical.receipts import derive_pin_receipt
from waybook.memory.working._shared import SharedMap, SharedSet
from waybook.model import Head, MemoryWrite, NewRecord
from waybook.model._records import Header, MemoryDelete, MemoryRename
from waybook.projections import replay

ROUTES = [Route("shared", frozenset({"facts"}))]


def write(path: str, text: str, rid: str) -> NewRecord:
    return NewRecord(id=rid, at=AT, body=MemoryWrite(path=path, text=text, digest=content_digest(text)))


def canonical_with(files: int) -> tuple[Any, InMemoryJournal, InMemoryJournal]:
    """An authority whose pin is at a canonical memory of `files` notes (in 20 directories)."""
    canonical, pins = InMemoryJournal("canonical"), InMemoryJournal("pins")
    authority = create_authority(
        working=InMemoryJournal("working"), canonical=canonical, routes=ROUTES, actor="host", pins=pins
    )
    records = [write(f"/memories/d{i % 20}/f{i}.md", f"fact {i}\n", f"s{i}") for i in range(files)]
    for start in range(0, files, 1_000):
        canonical.append(records[start : start + 1_000], expected=canonical.head())
    authority.host.advance_canonical(authority.agent.query(keys=[]).head, canonical.head())
    return authority, canonical, pins


def allocated_by_one_operation_advance(authority: Any, canonical: InMemoryJournal, n: int) -> int:
    """The peak bytes allocated while the pin advances over one more write (the last of `n` tries)."""
    peak = 0
    for i in range(n):
        pin = authority.agent.query(keys=[]).head
        canonical.append(
            [write(f"/memories/new{i % 3}.md", f"new {i}\n", f"n{i}")], expected=canonical.head()
        )
        tracemalloc.start()
        try:
            authority.host.advance_canonical(pin, canonical.head())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return peak


def test_a_one_operation_advance_allocates_no_more_at_8000_notes_than_at_10() -> None:
    small = allocated_by_one_operation_advance(*canonical_with(10)[:2], 3)
    large = allocated_by_one_operation_advance(*canonical_with(8_000)[:2], 3)
    # Before: the advance copied the whole view (every file, history list, directory and request id):
    # megabytes at 8,000 notes. Now it allocates the same few kilobytes at either size.
    assert large < 2 * small + 16 * 1024, (small, large)


def test_the_view_a_query_holds_is_not_changed_by_an_advance() -> None:
    authority, canonical, _ = canonical_with(50)
    before = authority.agent.query()
    pin = before.head
    canonical.append([write("/memories/d0/f0.md", "changed\n", "c1")], expected=canonical.head())
    canonical.append([write("/memories/late.md", "late\n", "c2")], expected=canonical.head())
    authority.host.advance_canonical(pin, canonical.head())
    after = authority.agent.query()
    assert {r.key: r.text for r in before.records}["/memories/d0/f0.md"] == "fact 0\n"
    assert {r.key: r.text for r in after.records}["/memories/d0/f0.md"] == "changed\n"
    assert "/memories/late.md" not in {r.key for r in before.records}
    assert [r.event for r in authority.agent.explain("/memories/d0/f0.md").revisions] == [
        "created",
        "superseded",
    ]


def test_advance_receipts_are_the_same_bytes_and_re_derive() -> None:
    authority, canonical, pins = canonical_with(30)
    pin = authority.agent.query().head
    canonical.append([write("/memories/x.md", "x\n", "x1")], expected=canonical.head())
    receipt = authority.host.advance_canonical(pin, canonical.head())
    assert derive_pin_receipt(canonical, pins, receipt) == receipt
    assert receipt.status == "advanced"
    assert receipt.new == canonical.head()


# --- the containers and the fold -------------------------------------------------------------------

KEYS = st.sampled_from([f"k{i}" for i in range(40)])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, st.integers()),
        st.tuples(st.just("del"), KEYS, st.just(0)),
        st.tuples(st.just("fork"), KEYS, st.just(0)),
    ),
    max_size=200,
)


class Colliding:
    """A key whose hash collides with every other's: the trie keeps them in one leaf at its bottom."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Colliding) and other.name == self.name


@given(OPS)
@settings(max_examples=150, deadline=None)
def test_a_shared_map_behaves_as_a_dict_and_a_fork_never_sees_later_writes(ops: list[Any]) -> None:
    shared: SharedMap[str, int] = SharedMap()
    model: dict[str, int] = {}
    forks: list[tuple[SharedMap[str, int], dict[str, int]]] = []
    for op, key, value in ops:
        if op == "set":
            shared[key], model[key] = value, value
        elif op == "del" and key in model:
            del shared[key], model[key]
        elif op == "fork":
            forks.append((shared.fork(), dict(model)))
        assert len(shared) == len(model)
    assert dict(shared.items()) == model
    for fork, frozen in forks:
        assert dict(fork.items()) == frozen
        assert len(fork) == len(frozen)


def test_colliding_keys_share_a_leaf_and_forks_stay_apart() -> None:
    shared: SharedMap[Colliding, int] = SharedMap()
    for i in range(100):
        shared[Colliding(str(i))] = i
    fork = shared.fork()
    del shared[Colliding("5")]
    shared[Colliding("6")] = -6
    assert len(shared) == 99
    assert Colliding("5") not in shared
    assert shared[Colliding("6")] == -6
    assert len(fork) == 100
    assert fork[Colliding("5")] == 5
    assert fork[Colliding("6")] == 6
    members = SharedSet(["/a", "/b"])
    other = members.fork()
    members.discard("/a")
    assert set(members) == {"/b"}
    assert set(other) == {"/a", "/b"}


PATHS = st.sampled_from(["/memories/a.md", "/memories/d/b.md", "/memories/d/e/c.md", "/memories/f.md"])


@st.composite
def memory_journals(draw: st.DrawFn) -> InMemoryJournal:
    """A canonical journal of random writes, deletes and renames (each valid where it lands)."""
    journal = InMemoryJournal("c")
    header = Header(journal="c", creator="test", metadata={}, role="canonical_memory")
    journal.append([NewRecord(id="h", at=AT, body=header)], expected=journal.head())
    files: set[str] = set()
    for i in range(draw(st.integers(0, 30))):
        path = draw(PATHS)
        choice = draw(st.sampled_from(["write", "write", "delete", "rename"]))
        body: Any
        if choice == "delete" and path in files:
            body = MemoryDelete(paths=(path,))
            files.discard(path)
        elif choice == "rename" and path in files and path.replace(".md", "-r.md") not in files:
            body = MemoryRename(moves=((path, path.replace(".md", "-r.md")),))
            files.discard(path)
            files.add(path.replace(".md", "-r.md"))
        else:
            text = f"text {i}\n"
            body = MemoryWrite(path=path, text=text, digest=content_digest(text))
            files.add(path)
        journal.append([NewRecord(id=f"r{i}", at=AT, body=body)], expected=journal.head())
    return journal


@given(memory_journals(), st.data())
@settings(max_examples=80, deadline=None)
def test_the_fold_gives_the_same_memory_in_shared_containers_forked_at_any_seq(
    journal: InMemoryJournal, data: st.DataObject
) -> None:
    plain = replay(MemoryProjection(), journal)
    cut = data.draw(st.integers(1, journal.head().seq))
    projection = MemoryProjection(shared=True)
    pinned = replay(projection, journal, at=cut)
    before = (dict(pinned.files), {p: list(r) for p, r in pinned.history.items()})
    advanced = pinned.copy()
    for record in journal.read(after=cut):
        advanced = projection.apply(advanced, record)
    advanced.check_invariants()
    assert Head(advanced.seq, advanced.digest) == Head(plain.seq, plain.digest)
    assert dict(advanced.files) == plain.files
    assert {p: list(r) for p, r in advanced.history.items()} == plain.history
    assert set(advanced.kept) == plain.kept
    assert dict(advanced.requests) == plain.requests
    assert (dict(pinned.files), {p: list(r) for p, r in pinned.history.items()}) == before
