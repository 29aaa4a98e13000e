"""The conversation first: which nodes are the harness's, and message text as safe Markdown.

A page hides harness entries (a real Claude Code session is mostly progress lines) until the reader
asks, counting them: each node says its kind of harness entry, or None (`node_data`, from
`projections.harness_kind`). The words of users, assistants and compaction summaries are rendered as
Markdown (`_markdown.render_markdown`); a user's single newlines are kept as line breaks, as typed.
A block whose Markdown is one plain paragraph carries no HTML: the page draws it from its text
(`markdown` says it is such a block). Tool output stays the exact text it was (the page folds it by
size), since a shell's output is not Markdown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from markdown_it.common.utils import escapeHtml

from waybook.view._markdown import render_markdown

MARKDOWN_ROLES: Final = {"user", "assistant", "compaction", "system"}
MARKDOWN_LIMIT: Final = 200_000
"""Text longer than this (characters) is shown as plain text: a page stays quick to make."""


def mark_conversation(nodes: Iterable[dict[str, Any]]) -> None:
    """Give each Markdown text block of a conversation node (not a harness entry: `node_data` names
    those, `projections.harness_kind`) its `html`."""
    for node in nodes:
        if node["role"] not in MARKDOWN_ROLES or node["harness"] is not None or "erased" in node:
            continue  # an erased node's text is its placeholder, shown as written
        for block in node["blocks"]:
            if block["type"] == "text" and not block.get("blob") and len(block["text"]) <= MARKDOWN_LIMIT:
                html = render_markdown(block["text"], breaks=node["role"] == "user")
                block["markdown"] = True
                if html != f"<p>{escapeHtml(block['text'].strip())}</p>\n":
                    block["html"] = html  # a plain paragraph is drawn from its text: half the page's bytes
