"""Harness entries: what an agent's own harness wrote into a session, as a category every reader knows.

Claude Code's progress lines, hook summaries and system lines, its file-history snapshots and queue
operations; the caveat and slash-command wrappers it puts around local commands (`<local-command-caveat>`,
`<command-name>`, ...) as user messages; Codex's events (token counts, task starts, command ends) and
turn contexts, and the context it injects as user messages (`<environment_context>`, AGENTS.md); Pi's
model, thinking-level and label entries; LangGraph's checkpoint records. On a real Claude Code session
they are most of the entries (1,371 of 1,529 on the shared spotter session).

`harness_kind(body)` names an entry's kind of harness (None for conversation): `show`, `stats`, `view`
and `serve` hide such entries by default, counting them, and show them on request (`--harness`, the
page's toggle); titles and branch labels skip them. The entries stay in the journal and in every export
that keeps them; this only decides what a reader is shown first. Pure: a body in, a name out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Final

from waybook.model import AnyBody, CustomEntry, Node, TextBlock, UserMessage

HARNESS_TAGS: Final = (
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
)
"""The tags Claude Code wraps a local command, its output and its caveat in."""
_TAG_BLOCK: Final = re.compile(r"<(" + "|".join(HARNESS_TAGS) + r")>.*?</\1>\s*", re.DOTALL)
SLASH_COMMANDS: Final = (
    "add-dir",
    "agents",
    "bug",
    "clear",
    "compact",
    "config",
    "context",
    "cost",
    "doctor",
    "exit",
    "export",
    "help",
    "hooks",
    "ide",
    "init",
    "login",
    "logout",
    "mcp",
    "memory",
    "model",
    "output-style",
    "permissions",
    "pr-comments",
    "release-notes",
    "resume",
    "review",
    "rewind",
    "security-review",
    "status",
    "statusline",
    "terminal-setup",
    "todos",
    "upgrade",
    "usage",
    "vim",
)
_SLASH_LINE: Final = re.compile(
    r"^[ \t]*/(?:" + "|".join(map(re.escape, SLASH_COMMANDS)) + r")(?:[ \t].*)?$\n?", re.MULTILINE
)
INJECTED_CONTEXT: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
)
"""How the context Codex injects as user messages starts (its own list, `is_user_turn_boundary`)."""

_CUSTOM_PREFIXES: Final = (
    ("claude_code.progress", "progress"),
    ("claude_code.system.stop_hook_summary", "hook"),
    ("claude_code.system", "system line"),
    ("claude_code.attachment", "attachment"),
    ("claude_code.", "bookkeeping"),
    ("codex.event_msg", "event"),
    ("codex.turn_context", "turn context"),
    ("pi.model_change", "settings"),
    ("pi.thinking_level_change", "settings"),
    ("pi.label", "label"),
    ("pi.session_info", "settings"),
    ("langgraph.checkpoint", "checkpoint"),
    ("langgraph.derived", "checkpoint"),
)
"""Custom entry types (a prefix) that are a harness's, and their kind; the first that matches wins."""


def harness_kind(body: AnyBody) -> str | None:
    """The kind of harness entry `body` is ("progress", "hook", "command", ...), or None: conversation."""
    if isinstance(body, CustomEntry):
        if body.in_context:
            return None
        for prefix, kind in _CUSTOM_PREFIXES:
            if body.type.startswith(prefix):
                return kind
        return None
    if isinstance(body, UserMessage):
        if not all(isinstance(b, TextBlock) for b in body.content):
            return None  # a message with an image is the user's
        text = "".join(b.text for b in body.content if isinstance(b, TextBlock))
        if not text.strip():
            return None
        if text.lstrip().lower().startswith(INJECTED_CONTEXT):
            return "injected context"
        if "<" in text or "/" in text:
            left = _SLASH_LINE.sub("", _TAG_BLOCK.sub("", text))
            if not left.strip():
                return "command"
    return None


def is_harness(body: AnyBody) -> bool:
    return harness_kind(body) is not None


def harness_counts(bodies: Iterable[AnyBody]) -> Counter[str]:
    """How many harness entries of each kind `bodies` hold (nodes only)."""
    counts: Counter[str] = Counter()
    for body in bodies:
        if isinstance(body, Node) and (kind := harness_kind(body)) is not None:
            counts[kind] += 1
    return counts
