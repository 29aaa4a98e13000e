"""Projections: the tree, branches, trajectories, the model context, time travel and snapshots.

The branching tests port how Pi and Rho describe session trees, in our own words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conformance.conftest import ADAPTERS, Adapter
from tests.helpers.session_steps import actions, build_session
from waybook import InMemoryJournal, Session
from waybook.journal import JsonlJournal, SessionJournal
from waybook.model import (
    Compaction,
    InvalidLeafMoveError,
    SnapshotMismatchError,
    TextBlock,
    UnknownNodeError,
    plain_text,
)
from waybook.projections import (
    COMPACTION_PREAMBLE,
    ContextProjection,
    LiveProjection,
    ProjectionOrderError,
    SnapshotStore,
    TreeProjection,
    at_seq,
    context_at,
    decode_snapshot,
    encode_snapshot,
    replay,
    restore,
    trajectory,
)


def texts(journal: SessionJournal, leaf: str | None = None) -> list[str]:
    tree = replay(TreeProjection(), journal)
    return [plain_text(m.content) for m in context_at(journal, tree, leaf)]


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.name)
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> SessionJournal:
    adapter: Adapter = request.param
    return adapter.make(tmp_path)


# --- branching, as Pi and Rho describe it ---------------------------------------------------------


def test_each_append_becomes_a_child_of_the_leaf_and_advances_it(journal: SessionJournal) -> None:
    session = Session.create(journal)
    first = session.user("one")
    second = session.assistant("two")
    tree = replay(TreeProjection(), journal)
    assert tree.children_of(first.id) == (second.id,)
    assert tree.leaf_id == second.id
    assert tree.roots() == (first.id,)


def test_after_moving_the_leaf_back_new_entries_grow_a_new_branch(journal: SessionJournal) -> None:
    session = Session.create(journal)
    question = session.user("question")
    abandoned = session.assistant("a weak answer")
    follow_up = session.user("why?")
    session.branch_from(question.id, reason="regenerate")
    retry = session.assistant("a better answer")
    tree = replay(TreeProjection(), journal)

    assert tree.children_of(question.id) == (abandoned.id, retry.id)
    active = trajectory(journal, tree)
    assert [r.id for r in active.records] == [question.id, retry.id]
    assert abandoned.id not in {r.id for r in active.records}
    branches = {b.end: b for b in tree.branches()}
    assert branches[retry.id].active
    assert not branches[follow_up.id].active
    old = trajectory(journal, tree, follow_up.id)
    assert [r.id for r in old.records] == [question.id, abandoned.id, follow_up.id]
    assert not old.active


def test_every_leaf_move_is_recorded_with_who_where_and_why(journal: SessionJournal) -> None:
    session = Session.create(journal, actor="reviewer")
    question = session.user("q")
    answer = session.assistant("a")
    move = session.branch_from(question.id, reason="answer was wrong")
    (recorded,) = replay(TreeProjection(), journal).moves
    assert (recorded.seq, recorded.record_id) == (move.seq, move.id)
    assert (recorded.from_leaf, recorded.to_leaf) == (answer.id, question.id)
    assert (recorded.reason, recorded.actor) == ("answer was wrong", "reviewer")


def test_after_a_reset_the_context_is_empty_and_the_next_node_is_a_new_root(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("old topic")
    session.reset(reason="new task")
    state = replay(ContextProjection(), journal)
    assert state.refs.entries == ()
    assert texts(journal) == []
    fresh = session.user("new topic")
    tree = replay(TreeProjection(), journal)
    assert tree.parent_of(fresh.id) is None
    assert len(tree.roots()) == 2
    assert texts(journal) == ["new topic"]


def test_with_several_compactions_only_the_latest_summary_is_used(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("u1")
    session.assistant("a1")
    u2 = session.user("u2")
    session.compact("first summary", first_kept=u2.id)
    session.assistant("a2")
    u3 = session.user("u3")
    session.compact("second summary", first_kept=u3.id)
    session.assistant("a3")
    assert texts(journal) == [COMPACTION_PREAMBLE + "second summary", "u3", "a3"]


def test_a_summary_written_with_its_own_framing_is_shown_as_written(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("u1")
    session.append(
        Compaction(parent=session.leaf, summary="This session continues...", first_kept=None, preamble=False)
    )
    session.assistant("a2")
    assert texts(journal) == ["This session continues...", "a2"]


def test_a_leaf_move_to_an_unknown_node_is_refused_before_anything_is_written(
    journal: SessionJournal,
) -> None:
    session = Session.create(journal)
    session.user("q")
    head = journal.head()
    with pytest.raises(InvalidLeafMoveError):
        session.branch_from("no-such-node", reason="typo")
    assert journal.head() == head


# --- the context ----------------------------------------------------------------------------------


def test_context_exclusions_remove_their_target(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("my key is sk-123")
    leaked = session.assistant("noted: sk-123")
    session.user("continue")
    session.exclude(leaked.id, reason="secret")
    assert texts(journal) == ["my key is sk-123", "continue"]
    with pytest.raises(UnknownNodeError):
        session.exclude("ghost")


def test_custom_entries_stay_out_unless_they_belong_in_context(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("hi")
    session.custom("pi.model_change", {"model": "m-2"})
    session.custom("ext.reminder", None, in_context=True, content="remember the deadline")
    assert texts(journal) == ["hi", "remember the deadline"]


def test_the_summary_is_a_user_message_with_the_fixed_preamble(journal: SessionJournal) -> None:
    session = Session.create(journal)
    u1 = session.user("u1")
    compaction = session.compact("what happened", first_kept=u1.id)
    tree = replay(TreeProjection(), journal)
    (summary, kept) = context_at(journal, tree)
    assert summary.role == "user"
    assert summary.source == compaction.id
    assert summary.content == (TextBlock(text=COMPACTION_PREAMBLE + "what happened"),)
    assert plain_text(kept.content) == "u1"


def test_tool_results_are_tool_messages(journal: SessionJournal) -> None:
    session = Session.create(journal)
    session.user("ls")
    session.tool_result("c1", "a.txt", tool_name="bash")
    tree = replay(TreeProjection(), journal)
    assert [m.role for m in context_at(journal, tree)] == ["user", "tool"]


def test_the_incremental_context_equals_a_recomputation_at_every_step() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    live = LiveProjection(ContextProjection(), journal)
    u1 = session.user("u1")
    steps = [
        lambda: session.assistant("a1"),
        lambda: session.compact("s", first_kept=u1.id),
        lambda: session.user("u2"),
        lambda: session.branch_from(u1.id, reason="r"),
        lambda: session.assistant("a1b"),
        lambda: session.exclude(u1.id),
        lambda: session.reset(),
        lambda: session.user("new"),
    ]
    from waybook.projections._context import context_refs

    for step in steps:
        step()
        live.refresh()
        assert live.state.refs == context_refs(live.state.tree, live.state.tree.leaf)


# --- time travel, snapshots, incremental replay ---------------------------------------------------


def test_time_travel_folds_the_prefix(journal: SessionJournal) -> None:
    session = Session.create(journal)
    question = session.user("q")
    first = session.assistant("first")
    at = journal.head().seq
    session.branch_from(question.id, reason="retry")
    session.assistant("second")
    then = replay(TreeProjection(), journal, at=at)
    assert then.leaf_id == first.id
    assert then.seq == at
    assert texts(journal, first.id) == ["q", "first"]


def test_a_snapshot_restores_only_into_its_own_history(tmp_path: Path) -> None:
    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="a")
    session.user("q")
    snapshot = encode_snapshot(TreeProjection(), replay(TreeProjection(), journal))
    assert restore(TreeProjection(), snapshot, journal).leaf_id == session.leaf
    other = InMemoryJournal()
    Session.create(other, journal_id="b").user("q")
    with pytest.raises(SnapshotMismatchError, match="another history"):
        restore(TreeProjection(), snapshot, other)
    shorter = InMemoryJournal()
    Session.create(shorter, journal_id="c")
    with pytest.raises(SnapshotMismatchError, match="no such seq"):
        restore(TreeProjection(), snapshot, shorter)


def test_a_snapshot_of_another_projection_or_damaged_bytes_is_refused() -> None:
    from waybook.model import DecodeError

    journal = InMemoryJournal()
    Session.create(journal).user("q")
    tree_snapshot = encode_snapshot(TreeProjection(), replay(TreeProjection(), journal))
    with pytest.raises(DecodeError):
        decode_snapshot(ContextProjection(), tree_snapshot)
    with pytest.raises(DecodeError):
        decode_snapshot(TreeProjection(), tree_snapshot.replace(b'"ids":', b'"idz":'))


def test_a_record_out_of_order_is_refused_by_a_projection() -> None:
    journal = InMemoryJournal()
    Session.create(journal).user("q")
    _first, second = list(journal.read())
    projection = TreeProjection()
    with pytest.raises(ProjectionOrderError):
        projection.apply(projection.initial(), second)


def test_time_travel_from_the_nearest_snapshot_equals_folding_the_prefix() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    users = []
    for i in range(30):
        users.append(session.user(f"u{i}").id)
        if i % 7 == 6:
            session.branch_from(users[i - 3], reason="go back three turns")
    store = SnapshotStore.build(ContextProjection(), journal, every=5)
    assert len(store) == journal.head().seq // 5
    for seq in range(journal.head().seq + 1):
        fast = at_seq(ContextProjection(), journal, seq, store)
        slow = replay(ContextProjection(), journal, at=seq)
        assert encode_snapshot(ContextProjection(), fast) == encode_snapshot(ContextProjection(), slow)


def test_lineage_survives_reopening_a_jsonl_journal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        q = session.user("q")
        session.assistant("a")
        session.branch_from(q.id, reason="retry")
        session.assistant("b")
        before = encode_snapshot(TreeProjection(), replay(TreeProjection(), journal))
    with JsonlJournal(path) as journal:
        assert encode_snapshot(TreeProjection(), replay(TreeProjection(), journal)) == before


# --- property: incremental equals from scratch ----------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(steps=actions, cuts=st.lists(st.integers(1, 60), max_size=5))
def test_folding_in_chunks_with_snapshots_equals_one_full_fold(
    steps: list[tuple[str, object]], cuts: list[int]
) -> None:
    journal = build_session(steps)
    projection = ContextProjection()
    full = replay(projection, journal)
    full.tree.check_invariants()
    state = projection.initial()
    for cut in sorted(cuts):
        for record in journal.read(after=state.seq, limit=max(cut - state.seq, 0)):
            state = projection.apply(state, record)
        state = restore(projection, encode_snapshot(projection, state), journal)
    for record in journal.read(after=state.seq):
        state = projection.apply(state, record)
    assert encode_snapshot(projection, state) == encode_snapshot(projection, full)


# --- the timeline: O(1) snapshots that share a later state's columns ----------------------------


def tree_facts(tree: Any) -> tuple[Any, ...]:
    return (
        tree.seq,
        tree.leaf_id,
        tree.leaves(),
        tree.roots(),
        tuple((b.end, b.path, b.active) for b in tree.branches()),
        tuple(tree.children_of(i) for i in tree.ids),
        tuple(tree.moves),
    )


@settings(max_examples=60, deadline=None)
@given(steps=actions, every=st.integers(1, 7))
def test_the_timeline_at_every_seq_equals_folding_the_prefix(
    steps: list[tuple[str, object]], every: int
) -> None:
    from waybook.projections._timeline import Timeline

    journal = build_session(steps)
    timeline = Timeline(journal, every=every)
    for seq in range(journal.head().seq + 1):
        fast = timeline.at(seq)
        slow = replay(TreeProjection(), journal, at=seq)
        assert tree_facts(fast) == tree_facts(slow)
        assert encode_snapshot(TreeProjection(), fast) == encode_snapshot(TreeProjection(), slow)
