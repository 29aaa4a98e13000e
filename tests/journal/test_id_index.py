"""Both id indexes answer exactly like a plain list of committed ids, even when fingerprints collide.

The compact index keeps only 4-byte fingerprints, so it must confirm every match by reading the id
back; a weak fingerprint (a few distinct values) makes nearly every lookup a collision and proves that
the answers never depend on fingerprints being unique.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from waybook.journal._id_index import BUCKET_LOAD, CompactIdIndex, DictIdIndex, IdIndex


def weak_fingerprint(rid: str) -> int:
    """Eight possible values: almost every lookup meets fingerprints of other ids."""
    return sum(map(ord, rid)) & 7


IDS = st.text(alphabet="abcxyz019", min_size=1, max_size=4)


def machine_for(kind: str, fingerprint: Callable[[str], int]) -> type[RuleBasedStateMachine]:
    # Big batches make buckets split; with colliding fingerprints every entry is a candidate, so stay small.
    sizes = [1, 40] if fingerprint is weak_fingerprint else [1, 700, 5000]

    class IdIndexMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.committed: list[tuple[str, bool]] = []  # the model: (id, is_node) at seq i + 1
            self.reads = 0
            self.index: IdIndex
            if kind == "compact":
                self.index = CompactIdIndex(self.committed_id, fingerprint=fingerprint)
            else:
                self.index = DictIdIndex()

        def committed_id(self, seq: int) -> tuple[str, bool]:
            self.reads += 1
            return self.committed[seq - 1]

        def known(self) -> dict[str, bool]:
            return dict(self.committed)

        @rule(ids=st.lists(IDS, min_size=1, max_size=6, unique=True), nodes=st.data())
        def add_fresh_ids(self, ids: list[str], nodes: st.DataObject) -> None:
            fresh = {rid: nodes.draw(st.booleans()) for rid in ids if rid not in self.known()}
            if fresh:
                self.index.add(fresh, len(self.committed) + 1)
                self.committed.extend(fresh.items())

        @rule(start=st.integers(0, 10**6), count=st.sampled_from(sizes))
        def add_many(self, start: int, count: int) -> None:
            known = self.known()
            fresh = {f"n{start + i}": i % 3 != 0 for i in range(count)}
            fresh = {rid: node for rid, node in fresh.items() if rid not in known}
            self.index.add(fresh, len(self.committed) + 1)
            self.committed.extend(fresh.items())

        @rule(ids=st.lists(IDS, min_size=1, max_size=6, unique=True))
        def add_nodes_unless_one_is_known(self, ids: list[str]) -> None:
            known = self.known()
            added = self.index.add_new_nodes(ids, len(self.committed) + 1)
            assert added == known.keys().isdisjoint(ids)
            if added:
                self.committed.extend((rid, True) for rid in ids)

        @rule(rid=IDS)
        def ask_about_any_id(self, rid: str) -> None:
            known = self.known()
            assert (rid in self.index) == (rid in known)
            assert self.index.node(rid) == known.get(rid, False)

        @rule(data=st.data())
        def ask_about_a_committed_id(self, data: st.DataObject) -> None:
            if not self.committed:
                return
            seq = data.draw(st.integers(1, len(self.committed)))
            rid, is_node = self.committed[seq - 1]
            assert rid in self.index
            assert self.index.node(rid) == is_node
            if isinstance(self.index, CompactIdIndex):
                assert self.index.seq_of(rid) == seq

        @rule(ids=st.lists(IDS, max_size=5))
        def ask_about_several(self, ids: list[str]) -> None:
            assert self.index.isdisjoint(ids) == self.known().keys().isdisjoint(ids)

        @invariant()
        def holds_every_committed_id(self) -> None:
            assert len(self.index) == len(self.committed)
            if isinstance(self.index, CompactIdIndex):
                self.index.check_invariants()
                assert sorted(seq for _, seq in self.index.entries()) == list(
                    range(1, len(self.committed) + 1)
                )

    IdIndexMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
    return IdIndexMachine


TestDictIndex = machine_for("dict", hash).TestCase
TestCompactIndex = machine_for("compact", hash).TestCase
TestCompactIndexWithCollidingFingerprints = machine_for("compact", weak_fingerprint).TestCase


def test_a_new_id_costs_no_read_and_a_known_one_costs_one() -> None:
    committed = [(f"id-{i}", True) for i in range(10_000)]
    reads: list[int] = []

    def committed_id(seq: int) -> tuple[str, bool]:
        reads.append(seq)
        return committed[seq - 1]

    index = CompactIdIndex(committed_id)
    index.add(dict(committed), 1)
    assert "id-fresh" not in index
    assert index.isdisjoint(f"new-{i}" for i in range(1000))
    assert len(reads) <= 1  # only a 32-bit fingerprint collision could cost a read
    reads.clear()
    assert index.seq_of("id-1234") == 1235
    assert reads == [1235]


def test_memory_is_about_eleven_bytes_per_id() -> None:
    n = 200_000
    index = CompactIdIndex(lambda seq: (f"{seq:016x}", True))
    for start in range(1, n + 1, 1000):  # in commit-sized batches, as a replay adds them
        index.add({f"{seq:016x}": True for seq in range(start, start + 1000)}, start)
    assert len(index) == n
    assert index.nbytes() / n < 13
    plain = DictIdIndex({f"{seq:016x}": True for seq in range(1, n + 1)})
    assert index.nbytes() * 7 < plain.nbytes()


def test_buckets_split_as_the_index_grows() -> None:
    n = 64 * BUCKET_LOAD * 3
    index = CompactIdIndex(lambda seq: (f"r{seq}", False))
    index.add({f"r{seq}": False for seq in range(1, n + 1)}, 1)
    index.check_invariants()
    assert all(index.seq_of(f"r{seq}") == seq for seq in range(1, n + 1, 97))


def test_seqs_beyond_32_bits_are_kept_whole() -> None:
    first = 2**32 - 2
    ids = {f"late-{i}": i % 2 == 0 for i in range(5)}
    index = CompactIdIndex(lambda seq: (f"late-{seq - first}", (seq - first) % 2 == 0))
    index.add(ids, first)
    assert [index.seq_of(rid) for rid in ids] == [first + i for i in range(5)]
    assert [index.node(rid) for rid in ids] == list(ids.values())


@pytest.mark.parametrize("value", [None, 3, b"id", ("id",)])
def test_a_non_string_is_never_a_committed_id(value: object) -> None:
    index = CompactIdIndex(lambda seq: ("id", True))
    index.add({"id": True}, 1)
    assert value not in index
    assert not index.node(value)  # type: ignore[arg-type]


def test_a_dict_index_hands_its_ids_over_in_commit_order() -> None:
    committed = [(f"id-{i}", i % 4 != 0) for i in range(1, 5001)]
    plain = DictIdIndex(committed)
    index = CompactIdIndex(lambda seq: committed[seq - 1])
    index.load(plain)
    index.check_invariants()
    assert len(index) == len(plain)
    assert all(index.seq_of(rid) == seq for seq, (rid, _) in enumerate(committed, start=1))
    assert all(index.node(rid) == is_node for rid, is_node in committed)
    with pytest.raises(ValueError, match="empty"):
        index.load(plain)


@pytest.mark.parametrize("count", [0, 1, 63, BUCKET_LOAD * 64, BUCKET_LOAD * 64 + 1, 70_000])
@pytest.mark.parametrize("fingerprint", [hash, weak_fingerprint])
def test_a_loaded_index_is_sized_once_and_answers_like_one_grown_id_by_id(
    count: int, fingerprint: Callable[[str], int]
) -> None:
    if fingerprint is weak_fingerprint and count > 100:
        pytest.skip("eight fingerprints: every lookup of a big index reads thousands of candidates")
    committed = [(f"id-{i}", i % 5 != 0) for i in range(1, count + 1)]
    loaded = CompactIdIndex(lambda seq: committed[seq - 1], fingerprint=fingerprint)
    loaded.load(dict(committed))
    grown = CompactIdIndex(lambda seq: committed[seq - 1], fingerprint=fingerprint)
    for seq, (rid, is_node) in enumerate(committed, start=1):
        grown.add({rid: is_node}, seq)
    for index in (loaded, grown):
        index.check_invariants()
    assert len(loaded) == len(grown) == count
    assert sorted(loaded.entries()) == sorted(grown.entries())  # the same (fingerprint, seq) pairs
    sample = list(enumerate(committed, start=1))[:: max(1, count // 500)]
    assert all(loaded.seq_of(rid) == seq and loaded.node(rid) == is_node for seq, (rid, is_node) in sample)
    assert "id-0" not in loaded
    assert f"id-{count + 1}" not in loaded
    # It goes on growing from there like any other: new ids in, buckets split, answers exact.
    more = {f"more-{i}": True for i in range(BUCKET_LOAD * 70)}
    committed.extend(more.items())
    assert loaded.add_new_nodes(list(more), count + 1)
    loaded.check_invariants()
    assert all(rid in loaded for rid in list(more)[::97])
