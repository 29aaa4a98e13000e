"""Harness noise: what an agent's terminal wrote into a session that no model should learn from.

Claude Code wraps local slash commands in tags (`<command-name>/compact</command-name>`,
`<command-message>`, `<command-args>`, `<local-command-stdout>`) and prefixes them with a
`<local-command-caveat>` block telling the model to ignore them; a user line may be a bare slash command
(`/compact`, `/clear`, ...); tool output carries ANSI escape sequences (colours, cursor moves) meant for
a terminal. `scrub_text` removes them from a message's text (and text parts) and counts each kind; training
exports call it unless `TrainingOptions.harness` is "keep".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from waybook.projections import HARNESS_TAGS, SLASH_COMMANDS

_TAG_BLOCK: Final = re.compile(r"<(" + "|".join(HARNESS_TAGS) + r")>.*?</\1>\s*", re.DOTALL)
_SLASH_LINE: Final = re.compile(
    r"^[ \t]*/(?:" + "|".join(map(re.escape, SLASH_COMMANDS)) + r")(?:[ \t].*)?$\n?", re.MULTILINE
)
_ANSI: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)


def scrub_text(text: str, role: str, dropped: Counter[str]) -> str:
    """`text` of a message of `role` without harness noise; `dropped` counts what went, by kind."""
    if "\x1b" in text or "\x9b" in text:
        text, n = _ANSI.subn("", text)
        dropped["ANSI escape sequences"] += n
    if role in ("user", "system") and "<" in text:
        text, n = _TAG_BLOCK.subn("", text)
        if n:
            dropped["harness command blocks (<local-command-caveat>, <command-name>, ...)"] += n
    if role == "user" and "/" in text:
        text, n = _SLASH_LINE.subn("", text)
        if n:
            dropped["slash-command lines"] += n
    return text if text.strip() else ""
