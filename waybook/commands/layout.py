"""How wide a command's lines are: the terminal's width there, a fixed width into a pipe or file.

A line meant for a person fits the terminal it is printed on; into a pipe, each row stays one line of
at most `PIPED_WIDTH` characters (ids are never cut: a row whose ids alone are wider is longer).
"""

from __future__ import annotations

import shutil
import sys
from typing import Final

from rich.console import Console

from waybook.commands.common import stdout
from waybook.commands.terminal import fit

PIPED_WIDTH: Final = 120
"""The width of a line written into a pipe or a file."""


def width() -> int:
    """The columns a line may use on stdout: the terminal's width, or `PIPED_WIDTH` into a pipe."""
    if sys.stdout.isatty():
        return max(shutil.get_terminal_size((80, 24)).columns, 20)
    return PIPED_WIDTH


def fitted() -> Console:
    """Rich on stdout, laid out for `width()`: a table fits the terminal, or `PIPED_WIDTH` into a pipe."""
    console = stdout()
    console.width = width()
    console.soft_wrap = False
    return console


def cut(text: str, size: int) -> str:
    """`text` on one line of at most `size` terminal columns, cut with `…`."""
    return fit(" ".join(text.split()), size)
