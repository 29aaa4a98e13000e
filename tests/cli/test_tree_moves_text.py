"""`waybook tree`'s leaf moves, written in one pass (issue 50): the bytes a `console.print` per line
gave, in a few calls a move, on the deep branchy shape whose every level moves the leaf."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape

from tests.helpers.formats import real_session, real_session_files
from tests.helpers.reference_outputs import reference_move_lines
from tests.helpers.sessions import branching_session
from tests.helpers.shapes import calls_made, deep_branchy_records, growth, write
from waybook.commands.ids import short_ids
from waybook.commands.plain_print import print_lines
from waybook.commands.tree import _move_lines
from waybook.journal import SessionJournal
from waybook.model import Header, LeafMoved, NewRecord, UserMessage, text
from waybook.projections import TreeProjection, TreeState, replay

_CONSOLES: dict[str, Callable[[io.StringIO, int], Console]] = {
    # what `waybook tree` prints on: layout.fitted(), into a pipe and on a terminal
    "fitted pipe": lambda out, width: Console(file=out, width=width, highlight=False, soft_wrap=False),
    "soft wrap": lambda out, width: Console(file=out, width=width, highlight=False, soft_wrap=True),
    "terminal": lambda out, width: Console(
        file=out, width=width, force_terminal=True, color_system="standard", highlight=False
    ),
    "highlighting": lambda out, width: Console(
        file=out, width=width, force_terminal=True, color_system="truecolor", highlight=True
    ),
    "recording": lambda out, width: Console(file=out, width=width, highlight=False, record=True),
}


def _printed(kind: str, width: int, draw: Callable[[Console], None]) -> str:
    out = io.StringIO()
    draw(_CONSOLES[kind](out, width))
    return out.getvalue()


def _one_by_one(lines: list[str]) -> Callable[[Console], None]:
    def draw(console: Console) -> None:
        for line in lines:
            console.print(escape(line), highlight=False)

    return draw


_line = st.text(st.sampled_from("ab09 -:>()[]\\/é😀\t\n\x1b*_~"), max_size=30)


@settings(max_examples=400)
@given(
    lines=st.lists(_line, max_size=6),
    width=st.sampled_from([8, 12, 40, 120]),
    kind=st.sampled_from(list(_CONSOLES)),
)
@example(lines=["  seq 4: a -> b", "    try again"], width=120, kind="fitted pipe")
@example(lines=["x" * 12, "y" * 13], width=12, kind="fitted pipe")  # at the width, one past it
@example(lines=["ends in a space ", "two  spaces"], width=40, kind="fitted pipe")
@example(lines=["an :smile: code", "a [bold]tag[/bold]", "a \\[ escape"], width=40, kind="fitted pipe")
@example(lines=["12 3.5 0x1f", "1 -> 2"], width=40, kind="highlighting")
@example(lines=[], width=40, kind="fitted pipe")
def test_lines_print_the_bytes_of_a_rich_print_per_line_on_every_console(
    lines: list[str], width: int, kind: str
) -> None:
    expected = _printed(kind, width, _one_by_one(lines))
    assert _printed(kind, width, lambda console: print_lines(console, lines)) == expected


def test_lines_keep_their_order_where_some_go_to_rich_and_others_are_written_directly() -> None:
    lines = ["plain", "wide é", "plain again", "an :smile:", *[f"line {i}" for i in range(5000)], "last"]
    expected = _printed("fitted pipe", 40, _one_by_one(lines))
    assert _printed("fitted pipe", 40, lambda console: print_lines(console, lines)) == expected


def _odd_moves() -> SessionJournal:
    """Leaf moves whose reasons and actors hold markup, emoji codes, wide characters, new lines,
    control characters and a trailing space, and a run of moves one after another."""
    reasons = ["try again", "[bold]x[/bold]", ":smile: :x:", "é wide 😀", "two\nlines", "bell \x07", "end "]
    records: list[NewRecord] = [
        NewRecord(id="h", at="2026-12-01T09:00:00.000Z", body=Header(journal="odd", creator="tests"))
    ]
    parent: str | None = None
    for i, reason in enumerate(reasons):
        q, back = f"q{i}", f"m{i}"
        records.append(
            NewRecord(id=q, at="2026-12-01T09:00:01.000Z", body=UserMessage(parent=parent, content=text("q")))
        )
        actor = "[red]me" if i % 2 else None
        move = LeafMoved(from_leaf=q, to_leaf=parent or q, reason=reason, actor=actor)
        records.append(NewRecord(id=back, at="2026-12-01T09:00:02.000Z", body=move))
        again = LeafMoved(from_leaf=parent or q, to_leaf=q, reason=reason)
        records.append(NewRecord(id=f"{back}b", at="2026-12-01T09:00:02.000Z", body=again))
        parent = q
    return write(iter(records))


def _journals() -> Iterator[SessionJournal]:
    yield write(deep_branchy_records(40))
    yield branching_session()
    yield _odd_moves()
    yield from (real_session(path) for path in real_session_files())


def _moves_of(journal: SessionJournal) -> tuple[TreeState, dict[str, str]]:
    tree = replay(TreeProjection(), journal)
    return tree, short_ids(list(tree.ids))


@pytest.mark.parametrize("kind", ["fitted pipe", "terminal", "recording"])
@pytest.mark.parametrize("width", [20, 120])
def test_the_leaf_moves_are_the_bytes_the_print_per_line_gave(kind: str, width: int) -> None:
    seen_moves = 0
    for journal in _journals():
        tree, names = _moves_of(journal)
        if not tree.moves:
            continue
        seen_moves += len(tree.moves)
        expected = _printed(kind, width, lambda c, t=tree, n=names: reference_move_lines(c, t, n))
        got = _printed(kind, width, lambda c, t=tree, n=names: print_lines(c, _move_lines(t, n)))
        assert got == expected
    assert seen_moves > 40


def _listing(levels: int) -> Callable[[], object]:
    tree, names = _moves_of(write(deep_branchy_records(levels)))
    return lambda: _printed(
        "fitted pipe", 120, lambda console: print_lines(console, _move_lines(tree, names))
    )


def test_the_leaf_moves_cost_a_few_calls_a_move_at_any_size() -> None:
    """A `console.print` per line made about 1,000 calls a line (markup, emoji codes, measuring,
    wrapping, the terminal's size asked twice); a plain line now costs a few."""
    assert growth(_listing, small=250, large=1000) < 4.4
    moves = 1000  # one a level, two lines each
    assert calls_made(_listing(1000)) / moves < 40
