"""Many lines of plain text, written as Rich prints them, without Rich's rendering of each line.

`console.print` of one short line runs Rich's markup parsing, emoji codes, measuring, wrapping and
segment rendering, and asks the environment for the terminal's size: about 75 us a line. A listing
of a line per record (`waybook tree`'s leaf moves: two lines a move, half the records' worth of lines
on a session that moves its leaf at every level) spent 80 % of the command there. Where none of that
machinery changes a byte (printable ASCII with no markup or emoji code, within the console's width),
`print_lines` writes the line itself; any other line goes to Rich, in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from rich.console import Console
from rich.markup import escape

_EMOJI_CODE: Final = re.compile(r":\S*:")
"""What could be an emoji code (`:smile:`), which Rich replaces: any such line goes to Rich."""

CHUNK: Final = 4096
"""Lines written in one call."""


def plain(line: str, *, width: int | None) -> bool:
    """Whether Rich prints `line` (given as text, not markup) byte for byte as it is: printable ASCII
    with no bracket or backslash (Rich's `escape` does not give every one of them back: `\\[` prints
    `[`), no emoji code, no trailing space (which Rich's wrapping strips) and, when `width` is given
    (a console that wraps), at most `width` characters."""
    return (
        line.isascii()
        and line.isprintable()
        and "[" not in line
        and "\\" not in line
        and not line.endswith(" ")
        and (width is None or len(line) <= width)
        and _EMOJI_CODE.search(line) is None
    )


def print_lines(console: Console, lines: Iterable[str]) -> None:
    """Print each of `lines` (text, not markup) as `console.print(escape(line), highlight=False)` does:
    the same bytes, written straight to the console's file where Rich would only copy the line."""
    direct = not (console.record or console.legacy_windows or console.quiet or console.is_jupyter)
    width = None if console.soft_wrap else console.width
    batch: list[str] = []
    for line in lines:
        if direct and plain(line, width=width):
            batch.append(line)
            if len(batch) == CHUNK:
                _write(console, batch)
            continue
        _write(console, batch)
        console.print(escape(line), highlight=False)
    _write(console, batch)


def _write(console: Console, batch: list[str]) -> None:
    """Write the lines of `batch` to the console's file, and empty it."""
    if batch:
        console.file.write("\n".join(batch) + "\n")
        console.file.flush()
        batch.clear()
