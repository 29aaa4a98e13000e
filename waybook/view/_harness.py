"""Which nodes are the harness's (progress lines, hooks, bookkeeping) rather than the conversation.

LEAD: a stand-in. Branch w-sources adds `waybook.projections.harness_kind` (issue 44.5), the one
predicate every reader shares; when it lands, `harness_kind` here is that function and this module goes.
It answers the same way for what it covers: a kind name for a harness entry, None for conversation.
"""

from __future__ import annotations

import re
from typing import Final

from waybook.model._records import AnyBody, CustomEntry, TextBlock, UserMessage

_CUSTOM_PREFIXES: Final = (
    ("claude_code.progress", "progress"),
    ("claude_code.system.stop_hook_summary", "hook"),
    ("claude_code.system", "system line"),
    ("claude_code.", "bookkeeping"),
    ("codex.event_msg", "event"),
    ("codex.turn_context", "turn context"),
    ("pi.model_change", "settings"),
    ("pi.thinking_level_change", "settings"),
    ("langgraph.checkpoint", "checkpoint"),
)
_COMMAND_TAGS: Final = re.compile(
    r"\s*(?:<(local-command-caveat|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr)>.*?</\1>\s*)+",
    re.DOTALL,
)


def harness_kind(body: AnyBody) -> str | None:
    """The kind of harness entry `body` is, or None when it is part of the conversation."""
    if isinstance(body, CustomEntry):
        if body.in_context:
            return None
        return next((kind for prefix, kind in _CUSTOM_PREFIXES if body.type.startswith(prefix)), None)
    if isinstance(body, UserMessage) and body.content and all(isinstance(b, TextBlock) for b in body.content):
        text = "".join(b.text for b in body.content if isinstance(b, TextBlock))
        if _COMMAND_TAGS.fullmatch(text):
            return "command"
    return None
