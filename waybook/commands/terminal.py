"""Text from a session is hostile: it never reaches a terminal raw, and counts read right.

A session can hold control characters and escape sequences (a tool's output, a pasted log, an attacker's
prompt). Written raw, they could retitle the auditor's terminal, move the cursor over earlier lines, or
reorder text with bidirectional overrides. `visible` shows each such character as an escape instead.
"""

from __future__ import annotations

import sys

from rich.cells import cell_len

from waybook._visible import visible as visible  # the commands take it from here, beside `say`


def say(line: str) -> None:
    """One line of a command's result on stdout as text: its control characters shown as escapes (a file
    name, a reason or a policy's name can hold them), never read as Rich markup."""
    sys.stdout.write(visible(line, one_line=True) + "\n")


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """`1 record`, `2 records`; `plural_form` for irregular words (`1 entry`, `2 entries`)."""
    word = singular if count == 1 else (plural_form or singular + "s")
    return f"{count} {word}"


def fit(line: str, size: int) -> str:
    """`line` in at most `size` terminal columns, cut with `…`. Columns, not characters: an emoji or a
    CJK character takes two (rich's cell widths, Unicode's East Asian Width), so a line of them cut by
    characters ran past the terminal's edge and wrapped."""
    if size <= 0:
        return ""
    if line.isascii():  # one column a character (control characters are escaped by `visible` first)
        return line if len(line) <= size else line[: size - 1] + "…"
    used, cut_at = 0, 0
    for at, char in enumerate(line):
        used += cell_len(char)
        if used <= size - 1:
            cut_at = at + 1
        if used > size:
            return line[:cut_at] + "…"
    return line
