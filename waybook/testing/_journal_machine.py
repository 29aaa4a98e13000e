"""A hypothesis state machine drives the journal under test and a plain list model side by side.

Rules append valid nodes, try stale and invalid appends, branch, reset, retry committed batches, read
ranges and (where the adapter persists) reopen the journal; after every step the adapter's own
`check_invariants()` runs (where it has one) and its head and tree must match the model.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import attrs
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from waybook.journal import SessionJournal, verify
from waybook.model import (
    GENESIS,
    AnyBody,
    AppendResult,
    AssistantMessage,
    Head,
    LeafMoved,
    NewRecord,
    ParentMismatchError,
    Reset,
    StaleWriterError,
    UserMessage,
    text,
)
from waybook.projections import TreeProjection, replay
from waybook.testing._journal_base import JournalFactory
from waybook.testing._records import AT


def leaf_after(leaf: str | None, record_id: str, body: AnyBody) -> str | None:
    """The model's own rule (not the journal's): a node becomes the leaf, a move goes where it says,
    a reset clears it, anything else leaves it."""
    if body.IS_NODE:
        return record_id
    if isinstance(body, LeafMoved):
        return body.to_leaf
    if isinstance(body, Reset):
        return None
    return leaf


@attrs.define
class JournalModel:
    """What a journal must hold: the records in order, the heads, the leaf, the node ids."""

    records: list[NewRecord] = attrs.Factory(list)
    heads: list[Head] = attrs.Factory(list)
    leaf: str | None = None
    nodes: list[str] = attrs.Factory(list)

    def commit(self, batch: list[NewRecord], result: AppendResult) -> None:
        for new, record in zip(batch, result.records, strict=True):
            self.records.append(new)
            self.heads.append(Head.of(record))
            self.leaf = leaf_after(self.leaf, new.id, new.body)
            if new.body.IS_NODE:
                self.nodes.append(new.id)


def machine_for(kit: JournalFactory) -> type[RuleBasedStateMachine]:
    persists = kit.persists()

    class JournalMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.tmp = Path(tempfile.mkdtemp(prefix="waybook-sm-"))
            self.journal: SessionJournal = kit.make_journal(self.tmp)
            self.model = JournalModel()
            self.counter = 0
            self.last: tuple[list[NewRecord], Head, AppendResult] | None = None

        def teardown(self) -> None:
            try:
                assert verify(self.journal).ok
            finally:
                kit.close_journal(self.journal)
                shutil.rmtree(self.tmp, ignore_errors=True)

        def fresh(self) -> str:
            self.counter += 1
            return f"n{self.counter}"

        def head(self) -> Head:
            return self.model.heads[-1]

        def append(self, batch: list[NewRecord]) -> None:
            expected = self.head()
            result = self.journal.append(batch, expected=expected)
            self.model.commit(batch, result)
            self.last = (batch, expected, result)

        @initialize()
        def start(self) -> None:
            batch = [kit.header()]
            result = self.journal.append(batch, expected=GENESIS)
            self.model.commit(batch, result)

        @rule(words=st.text(max_size=20), size=st.integers(1, 3))
        def append_turns(self, words: str, size: int) -> None:
            batch, leaf = [], self.model.leaf
            for i in range(size):
                rid = self.fresh()
                body: UserMessage | AssistantMessage = (
                    UserMessage(parent=leaf, content=text(words))
                    if i % 2 == 0
                    else AssistantMessage(parent=leaf, content=text(words), stop_reason="end_turn")
                )
                batch.append(NewRecord(id=rid, at=AT, body=body))
                leaf = rid
            self.append(batch)

        @precondition(lambda self: len(self.model.nodes) > 0)
        @rule(data=st.data())
        def branch_to_an_earlier_node(self, data: st.DataObject) -> None:
            target = data.draw(st.sampled_from(self.model.nodes))
            move = LeafMoved(from_leaf=self.model.leaf, to_leaf=target, reason="retry")
            self.append([NewRecord(id=self.fresh(), at=AT, body=move)])

        @rule()
        def reset(self) -> None:
            self.append([NewRecord(id=self.fresh(), at=AT, body=Reset())])

        @precondition(lambda self: len(self.model.nodes) > 1)
        @rule(data=st.data())
        def a_node_off_the_leaf_is_refused(self, data: st.DataObject) -> None:
            parent = data.draw(st.sampled_from([n for n in self.model.nodes if n != self.model.leaf]))
            bad = NewRecord(id=self.fresh(), at=AT, body=UserMessage(parent=parent, content=text("x")))
            before = self.journal.head()
            with pytest.raises(ParentMismatchError):
                self.journal.append([bad], expected=self.head())
            assert self.journal.head() == before

        @precondition(lambda self: len(self.model.heads) > 1)
        @rule(data=st.data())
        def a_stale_append_is_refused(self, data: st.DataObject) -> None:
            stale = data.draw(st.sampled_from(self.model.heads[:-1]))
            fresh = NewRecord(id=self.fresh(), at=AT, body=Reset())
            with pytest.raises(StaleWriterError) as caught:
                self.journal.append([fresh], expected=stale)
            assert caught.value.actual == self.head()

        @precondition(lambda self: self.last is not None)
        @rule()
        def a_retry_of_the_last_batch_returns_its_result(self) -> None:
            assert self.last is not None
            batch, expected, result = self.last
            assert self.journal.append(batch, expected=expected) == result

        @rule(after=st.integers(0, 40), limit=st.none() | st.integers(0, 10))
        def read_a_range(self, after: int, limit: int | None) -> None:
            got = [r.id for r in self.journal.read(after=after, limit=limit)]
            end = None if limit is None else after + limit
            assert got == [r.id for r in self.model.records[after:end]]

        @precondition(lambda _self: persists)
        @rule()
        def reopen_the_journal(self) -> None:
            self.journal = kit.reopen_journal(self.journal)
            assert [r.id for r in self.journal.read()] == [r.id for r in self.model.records]

        @invariant()
        def adapter_is_consistent_and_matches_the_model(self) -> None:
            check = getattr(self.journal, "check_invariants", None)  # an adapter's own optional self-check
            if check is not None:
                check()
            if self.model.heads:
                assert self.journal.head() == self.head()

        @invariant()
        def the_tree_projection_is_well_formed_and_follows_the_leaf(self) -> None:
            if not self.model.heads:
                return
            tree = replay(TreeProjection(), self.journal)
            tree.check_invariants()
            assert tree.leaf_id == self.model.leaf
            assert set(tree.ids) == set(self.model.nodes)

    JournalMachine.__name__ = f"JournalMachine_{type(kit).__name__}"
    return JournalMachine
