"""A borderless table of many rows, written in one pass: Rich's `Table(box=None, pad_edge=False,
show_edge=False)` bytes, without Rich's per-cell rendering.

Rich renders every cell through its measuring, wrapping and cropping machinery and holds the whole
table's segments before it writes a byte: about 2 ms a row, and more per row as the table grows (a
deep branchy session has a row per branch, a quarter of its records). Where nothing of that machinery
shows in the output (no colours, every cell plain printable ASCII with no markup, the table within the
console's width), `print_table` writes the same lines itself; anywhere else it hands the table to Rich.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from rich.color import ColorSystem
from rich.console import Console
from rich.style import Style
from rich.table import Table

from waybook.commands.plain_print import plain


@attrs.frozen
class Column:
    header: str
    right: bool
    """Right-justified (numbers); left-justified otherwise."""


@attrs.frozen
class Row:
    cells: Sequence[str]
    dim: bool = False


def _plain(cell: str) -> bool:
    """Whether Rich would print `cell` as it is (plain_print.plain: no markup, emoji code or trailing
    space; the table's width is checked as a whole)."""
    return plain(cell, width=None)


def rich_table(columns: Sequence[Column], rows: Sequence[Row]) -> Table:
    """The table as Rich lays it out (the reference `print_table` matches)."""
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column.header, justify="right" if column.right else "left", overflow="fold")
    for row in rows:
        table.add_row(*row.cells, style="dim" if row.dim else None)
    return table


def plain_lines(
    columns: Sequence[Column], rows: Sequence[Row], *, width: int, color_system: str | None = None
) -> list[str] | None:
    """The table's lines as Rich prints them on a console of `width` columns and `color_system` (None:
    no styles), or None where Rich would do more than pad (a cell it would interpret or fold): one pass
    to measure, one to write. Styled, each cell and each padding space is one styled piece, as Rich's."""
    widths = [len(column.header) for column in columns]
    last = len(columns) - 1
    for row in rows:
        for i, cell in enumerate(row.cells):
            if not _plain(cell):
                return None
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    if not all(_plain(column.header) for column in columns):
        return None
    if sum(widths) + 2 * last > width:  # Rich would shrink and fold columns to the width
        return None
    if not all(widths):
        return None  # an empty column: Rich's own edge cases
    bold, dim = Style(bold=True), Style(dim=True)

    def line(cells: Sequence[str], style: Style | None) -> str:
        parts = [
            cell.rjust(size) if column.right else cell.ljust(size)
            for cell, size, column in zip(cells, widths, columns, strict=True)
        ]
        if style is None or color_system is None:
            return "  ".join(parts)
        system = ColorSystem[color_system.upper()]
        gap = style.render(" ", color_system=system) * 2
        return gap.join(style.render(part, color_system=system) for part in parts)

    header = line([c.header for c in columns], bold)
    return [header, *(line(row.cells, dim if row.dim else None) for row in rows)]


def print_table(console: Console, columns: Sequence[Column], rows: Sequence[Row]) -> None:
    """Print the table on `console`: Rich's bytes, in time linear in the cells, where it fits the
    console's width and holds only plain cells; through Rich itself elsewhere."""
    if not console.record and not console.legacy_windows:
        lines = plain_lines(columns, rows, width=console.width, color_system=console.color_system)
        if lines is not None:
            file = console.file
            for start in range(0, len(lines), CHUNK):
                file.write("\n".join(lines[start : start + CHUNK]) + "\n")
            return
    console.print(rich_table(columns, rows))


CHUNK = 4096
"""Lines written in one call."""
