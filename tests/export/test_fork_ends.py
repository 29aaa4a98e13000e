"""The preference pairs' forks find the same branch ends, with the same verdicts and the same prompt
exclusions, as a walk of every branch below every fork did (issue 50), in time linear in the shape."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.formats import real_session, real_session_files
from tests.helpers.reference_outputs import reference_fork_ends, reference_prompt_exclusions
from tests.helpers.session_steps import build_session, tool_actions
from tests.helpers.sessions import branching_session
from tests.helpers.shapes import deep_branchy_records, growth, write
from waybook.export._forks import ForkEnds
from waybook.journal import SessionJournal
from waybook.projections import TreeProjection, TreeState, replay


def _assert_same_as_every_branch_walked(tree: TreeState, labels: dict[str, str]) -> None:
    found = ForkEnds(tree, labels)
    for fork in range(tree.node_count):
        children = list(tree.children_positions(fork))
        if len(children) < 2:
            continue
        below = []
        for child in children:
            verdicts = reference_fork_ends(tree, labels, child, fork)
            below += list(verdicts)
            assert found.chosen_ends(child) == [e for e, v in verdicts.items() if v == "chosen"]
            assert found.other_ends(child) == [e for e, v in verdicts.items() if v != "chosen"]
            assert found.holds_chosen(child) == ("chosen" in verdicts.values())
        path = tree.path_positions(fork)
        expected = reference_prompt_exclusions(tree, fork, below) & set(path)
        assert found.prompt_exclusions(fork, path) == expected


def _labelled(journal: SessionJournal, picks: list[tuple[int, str]]) -> tuple[TreeState, dict[str, str]]:
    tree = replay(TreeProjection(), journal)
    labels = {tree.ids[at % tree.node_count]: label for at, label in picks} if tree.node_count else {}
    return tree, labels


_picks = st.lists(st.tuples(st.integers(0, 200), st.sampled_from(["chosen", "rejected"])), max_size=8)


@settings(max_examples=150)
@given(tool_actions, _picks)
def test_any_session_and_labels_give_the_ends_and_exclusions_of_every_branch_walked(
    steps: list[tuple[str, object]], picks: list[tuple[int, str]]
) -> None:
    _assert_same_as_every_branch_walked(*_labelled(build_session(steps), picks))


def test_the_shapes_and_real_sessions_give_the_ends_of_every_branch_walked() -> None:
    picks = [(3, "chosen"), (8, "rejected"), (11, "chosen"), (30, "chosen"), (31, "rejected"), (57, "chosen")]
    journals = [
        write(deep_branchy_records(15)),
        write(deep_branchy_records(15, tools=True)),
        branching_session(),
        *(real_session(path) for path in real_session_files()),
    ]
    for journal in journals:
        for chosen in (picks, [(i, "chosen") for i in range(0, 200, 3)]):
            _assert_same_as_every_branch_walked(*_labelled(journal, chosen))


def test_finding_the_forks_ends_costs_the_ends_it_returns_on_the_deep_branchy_shape() -> None:
    """Every second answer chosen: each fork pairs every end below it, so the ends returned grow as the
    square of the levels; the calls grow with them, never faster (walking every branch below every fork
    for each verdict did, and walked all of them with no label at all)."""
    returned: dict[int, int] = {}

    def pairs(levels: int) -> object:
        tree = replay(TreeProjection(), write(deep_branchy_records(levels)))
        labels = {tree.ids[p]: "chosen" for p in range(tree.node_count) if tree.ids[p].endswith("b")}

        def find() -> None:
            found, count = ForkEnds(tree, labels), 0
            for fork in range(tree.node_count):
                children = list(tree.children_positions(fork))
                if len(children) > 1:
                    for child in children:
                        count += len(found.chosen_ends(child)) + len(found.other_ends(child))
            returned[levels] = count

        return find

    calls = growth(pairs, small=100, large=400)  # type: ignore[arg-type]
    assert calls < 1.3 * returned[400] / returned[100]


def test_forks_with_no_chosen_end_below_cost_their_children_alone() -> None:
    """No label chosen below a fork: the fork is passed over by its children's counts, linear in all."""

    def pairs(levels: int) -> object:
        tree = replay(TreeProjection(), write(deep_branchy_records(levels)))
        labels = {tree.ids[p]: "rejected" for p in range(tree.node_count) if tree.ids[p].endswith("a")}

        def find() -> None:
            found = ForkEnds(tree, labels)
            for fork in range(tree.node_count):
                for child in tree.children_positions(fork):
                    assert not found.holds_chosen(child)

        return find

    assert growth(pairs, small=250, large=1000) < 5.5  # type: ignore[arg-type]
