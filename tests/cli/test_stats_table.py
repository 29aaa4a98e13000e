"""`waybook stats`' text table, written in one pass (issue 50): the bytes Rich's table printed, in work
linear in the rows, on the deep branchy shape whose every level is a branch (a row)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.errors import MarkupError

from tests.helpers.shapes import calls_made, committed, deep_branchy_records, growth
from waybook.commands.cost_report import cost_by_model, price_table
from waybook.commands.plain_table import Column, Row, plain_lines, print_table, rich_table
from waybook.commands.stats import show
from waybook.projections import session_stats

_CONSOLES: dict[str, Callable[[io.StringIO, int], Console]] = {
    "pipe": lambda out, width: Console(file=out, width=width, highlight=False, soft_wrap=True),
    "terminal": lambda out, width: Console(
        file=out, width=width, force_terminal=True, color_system="standard", highlight=False
    ),
    "truecolor": lambda out, width: Console(
        file=out, width=width, force_terminal=True, color_system="truecolor", highlight=False
    ),
    "no color": lambda out, width: Console(
        file=out, width=width, force_terminal=True, no_color=True, highlight=False
    ),
}


def _printed(kind: str, width: int, draw: Callable[[Console], None]) -> str:
    out = io.StringIO()
    draw(_CONSOLES[kind](out, width))
    return out.getvalue()


_cell = st.text(st.sampled_from("0123456789,./s- *abcé[]\t"), max_size=12)


@settings(max_examples=300)
@given(
    rights=st.lists(st.booleans(), min_size=1, max_size=7),
    data=st.data(),
    width=st.sampled_from([12, 40, 120, 1 << 20]),
    kind=st.sampled_from(list(_CONSOLES)),
)
@example(rights=[False, True], data=None, width=120, kind="pipe")  # type: ignore[arg-type]
@example(rights=[True], data=None, width=12, kind="terminal")  # type: ignore[arg-type]
def test_a_table_prints_the_bytes_rich_printed_on_every_console(
    rights: list[bool], data: st.DataObject | None, width: int, kind: str
) -> None:
    if data is None:  # the stats table's shape; a trailing space Rich's justifying strips
        headers = ["", "turns"][: len(rights)] if len(rights) == 2 else ["0 "]
        rows = [Row(["total", "3"]), Row(["  ab", "12"], dim=True)] if len(rights) == 2 else []
    else:
        headers = data.draw(st.lists(_cell, min_size=len(rights), max_size=len(rights)))
        rows = data.draw(
            st.lists(
                st.builds(Row, st.lists(_cell, min_size=len(rights), max_size=len(rights)), st.booleans()),
                max_size=5,
            )
        )
    columns = [Column(header, right=right) for header, right in zip(headers, rights, strict=True)]
    try:
        printed = _printed(kind, width, lambda console: console.print(rich_table(columns, rows)))
    except MarkupError:  # a cell Rich reads as broken markup: the same error either way
        with pytest.raises(MarkupError):
            _printed(kind, width, lambda console: print_table(console, columns, rows))
        return
    assert _printed(kind, width, lambda console: print_table(console, columns, rows)) == printed


@pytest.mark.parametrize("cell", [":smile:", "a\\b", "x :+1: y"])
@pytest.mark.parametrize("kind", sorted(_CONSOLES))
def test_a_cell_rich_reads_as_an_emoji_code_or_an_escape_prints_as_rich_prints_it(
    cell: str, kind: str
) -> None:
    """Rich replaces `:smile:` by its emoji in a table's cell: such a cell goes to Rich (the one-pass
    path wrote it as it was)."""
    columns, rows = [Column("what", right=False), Column("n", right=True)], [Row([cell, "1"])]
    printed = _printed(kind, 120, lambda console: console.print(rich_table(columns, rows)))
    assert _printed(kind, 120, lambda console: print_table(console, columns, rows)) == printed


def test_plain_cells_that_fit_take_the_one_pass_path_and_others_go_to_rich() -> None:
    columns = [Column("", right=False), Column("n", right=True)]
    assert plain_lines(columns, [Row(["total", "12"])], width=120) == ["        n", "total  12"]
    assert plain_lines(columns, [Row(["[bold]x", "1"])], width=120) is None  # Rich reads markup
    assert plain_lines(columns, [Row(["é", "1"])], width=120) is None  # not ASCII: Rich measures cells
    assert plain_lines(columns, [Row(["total", "12"])], width=8) is None  # Rich folds to the width


def _stats_text(levels: int) -> Callable[[], object]:
    """`waybook stats`' text of a deep branchy session of `levels` levels, into a pipe."""
    records = committed(deep_branchy_records(levels))
    stats, cost = session_stats(records), cost_by_model(records, price_table())

    def printed() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            show({"s": stats}, {"s": cost}, as_json=False)

    return printed


def test_the_stats_table_costs_a_few_calls_a_branch_at_any_size() -> None:
    """Rich's table made about 3,400 calls a row (measuring, wrapping and cropping every cell),
    and held every row's segments before writing; the table now costs a few calls a row."""
    assert growth(_stats_text, small=250, large=1000) < 4.4
    rows = 1000  # a branch a level
    assert calls_made(_stats_text(1000)) / rows < 200  # Rich: 3,400
