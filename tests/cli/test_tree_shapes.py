"""`waybook tree` on any shape gives the bytes the code it replaced gave (issue 50): the text tree built
only as deep as Rich shows labels, and `--json` written branch by branch."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from rich.console import Console

from tests.helpers.formats import real_session, real_session_files
from tests.helpers.reference_outputs import (
    reference_segment_tree,
    reference_shown_seqs,
    reference_tree_json,
)
from tests.helpers.sessions import branching_session
from tests.helpers.shapes import committed, deep_branchy_records, growth, linear_records, write
from waybook.commands.common import emit_json, emit_json_streamed
from waybook.commands.ids import short_ids
from waybook.commands.tree import _deepest, _segment_tree, _shown_seqs, tree_json
from waybook.journal import SessionJournal
from waybook.journal._reading import read_seqs
from waybook.projections import TreeProjection, replay


def _journals() -> list[SessionJournal]:
    return [
        write(deep_branchy_records(40)),
        write(deep_branchy_records(40, tools=True)),
        write(linear_records(10)),
        branching_session(),
        *(real_session(path) for path in real_session_files()),
    ]


def _render(trees: list[object], width: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system="standard", soft_wrap=False)
    for tree in trees:
        console.print(tree)
    return out.getvalue()


@pytest.mark.parametrize("width", [20, 80, 120])
def test_the_text_tree_is_what_rich_printed_of_the_tree_built_at_every_depth(width: int) -> None:
    for journal in _journals():
        tree = replay(TreeProjection(), journal)
        names = short_ids(list(tree.ids))
        active = set(tree.path_to(tree.leaf_id))
        deepest = _deepest(width)
        labels = {r.id: r for r in read_seqs(journal, sorted(_shown_seqs(tree, deepest)))}
        every = {r.id: r for r in read_seqs(journal, sorted(reference_shown_seqs(tree)))}
        new = [_segment_tree(tree, root, active, labels, names, deepest) for root in tree.roots()]
        old = [reference_segment_tree(tree, root, active, every, names) for root in tree.roots()]
        assert _render(new, width) == _render(old, width)


def _captured(emit: object, value: object) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit(value)  # type: ignore[operator]
    return out.getvalue()


def test_tree_json_writes_the_bytes_of_the_document_built_whole() -> None:
    for journal in _journals():
        tree = replay(TreeProjection(), journal)
        subagents = {"subagents": [{"id": "x", "path": "é"}]}
        streamed = _captured(emit_json_streamed, tree_json(tree) | subagents)
        assert streamed == _captured(emit_json, reference_tree_json(tree) | subagents)
        assert json.loads(streamed)["branches"]


def test_the_text_tree_grows_linearly_on_the_deep_branchy_shape() -> None:
    """4x the levels makes about 4x the calls (counting each run's entries along the path made 16x)."""

    def shown(levels: int) -> object:
        tree = replay(TreeProjection(), write(deep_branchy_records(levels)))
        names = short_ids(list(tree.ids))
        active = set(tree.path_to(tree.leaf_id))
        deepest = _deepest(120)
        record = committed(deep_branchy_records(1))[1]

        def build() -> None:
            assert _shown_seqs(tree, deepest)
            for root in tree.roots():
                _segment_tree(tree, root, active, _AnyLabel(record), names, deepest)

        return build

    assert growth(shown, small=250, large=1000) < 5.5  # type: ignore[arg-type]


class _AnyLabel(dict):  # type: ignore[type-arg]
    """Every id's label record: one fixed record (the layout's cost, not the journal's reads)."""

    def __init__(self, record: object) -> None:
        super().__init__()
        self.record = record

    def __missing__(self, key: str) -> object:
        return self.record
