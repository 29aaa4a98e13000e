"""Control characters shown as escapes: what a terminal, a page or a model is shown of text from outside.

A session's text (a tool's output, a pasted log, an erasure's reason) can hold control characters and
bidirectional controls. Shown raw, they could drive a terminal or reorder the text around them.
`visible` shows each as a `\\xNN` / `\\uNNNN` escape instead. Shared by the commands' terminal output and
the placeholder an erasure leaves (`waybook.model.erased_placeholder`).
"""

from __future__ import annotations

import re
from typing import Final

_HIDDEN: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_HIDDEN_OR_NEWLINE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """`text` with every control character (but newline and tab, unless `one_line`) and every
    bidirectional control shown as a `\\xNN` / `\\uNNNN` escape, so a terminal prints it as it is."""
    return (_HIDDEN_OR_NEWLINE if one_line else _HIDDEN).sub(_escape, text)
