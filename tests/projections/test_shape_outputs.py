"""Stats and the context are linear in the session's shape and give the same bytes as the code they
replaced (issue 50): the references in tests/helpers/reference_outputs.py walk each branch's own path."""

from __future__ import annotations

from hypothesis import given, settings

from tests.helpers.formats import real_session, real_session_files
from tests.helpers.reference_outputs import reference_session_stats
from tests.helpers.session_steps import build_session, tool_actions
from tests.helpers.sessions import branching_session
from tests.helpers.shapes import committed, deep_branchy_records, growth, linear_records
from waybook.model import Record
from waybook.projections import ContextProjection, TreeProjection, fold, session_stats
from waybook.projections._context import context_refs


def _small_shapes() -> list[list[Record]]:
    return [
        committed(deep_branchy_records(12)),
        committed(deep_branchy_records(12, tools=True)),
        committed(linear_records(6)),
        list(branching_session().read()),
    ]


def test_the_stats_of_every_branch_are_those_of_a_walk_of_its_own_path() -> None:
    for records in _small_shapes():
        assert session_stats(records) == reference_session_stats(records)


def test_the_stats_of_the_real_sessions_are_unchanged() -> None:
    files = real_session_files()
    assert files
    for path in files:
        records = list(real_session(path).read())
        for harness in (False, True):
            new, old = (
                session_stats(records, harness=harness),
                reference_session_stats(records, harness=harness),
            )
            assert new == old, path
            assert new.as_json() == old.as_json(), path


@settings(max_examples=150)
@given(tool_actions)
def test_the_stats_of_any_session_are_those_of_a_walk_of_each_path(steps: list[tuple[str, object]]) -> None:
    records = list(build_session(steps).read())
    assert session_stats(records) == reference_session_stats(records)


def _assert_context_is_recomputed_context(records: list[Record]) -> None:
    projection = ContextProjection()
    state = projection.initial()
    for record in records:
        state = projection.apply(state, record)
        assert state.refs == context_refs(state.tree, state.tree.leaf)
    batched = projection.apply_many(projection.initial(), records)
    assert batched == state
    assert batched.refs == state.refs


def test_the_context_after_every_move_is_the_context_recomputed_from_the_tree() -> None:
    for records in _small_shapes():
        _assert_context_is_recomputed_context(records)
    for path in real_session_files():
        _assert_context_is_recomputed_context(list(real_session(path).read()))


@settings(max_examples=150)
@given(tool_actions)
def test_the_context_of_any_session_is_the_context_recomputed_at_every_record(
    steps: list[tuple[str, object]],
) -> None:
    _assert_context_is_recomputed_context(list(build_session(steps).read()))


def test_stats_and_the_context_fold_grow_linearly_on_the_deep_branchy_shape() -> None:
    """4x the levels makes about 4x the calls (a walk of the path per branch or per move made 16x)."""

    def stats(levels: int) -> object:
        records = committed(deep_branchy_records(levels, tools=True))
        return lambda: session_stats(records)

    def context(levels: int) -> object:
        records = committed(deep_branchy_records(levels))

        def fold_and_read() -> None:
            projection = ContextProjection()
            assert projection.apply_many(projection.initial(), records).refs.entries

        return fold_and_read

    def tree(levels: int) -> object:
        records = committed(deep_branchy_records(levels))
        return lambda: fold(TreeProjection(), records)

    for make in (stats, context, tree):
        assert growth(make, small=250, large=1000) < 5.5, make.__name__  # type: ignore[arg-type]
