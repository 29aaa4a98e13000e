"""Where a Claude Code sub-agent's transcript hangs from in its session, when no line of the session
names it: from what the session held when the sub-agent started, so a session imported as it grows
links it where an import of the whole file does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from waybook.formats._foreign import FALLBACK_TIMESTAMP, read_json_lines, timestamp
from waybook.formats.claude_code._context import SOURCE, TREE_TYPES, blocks_of


@attrs.frozen
class Anchor:
    """Where a sub-agent found beside a session hangs from: a line of the session, and how we know."""

    uuid: str
    call_id: str | None
    reason: str


@attrs.frozen
class SubagentStart:
    """A sub-agent transcript found beside a session: the journal it imports as, and its first line (a
    user, assistant, system, progress or attachment line), which says when it started and what it was
    asked."""

    journal: str
    first: Mapping[str, Any] = attrs.field(eq=False)

    @property
    def at(self) -> str:
        """When the sub-agent started: its first line's timestamp (the epoch when it has none)."""
        return timestamp(self.first.get("timestamp"), FALLBACK_TIMESTAMP)


def subagent_start(journal: str, data: bytes | str) -> SubagentStart | None:
    """The start of the sub-agent transcript `data` (importing as `journal`); None if it has no line of
    Claude Code's tree yet."""
    lines, _, _ = read_json_lines(data, source=SOURCE, lenient=True)
    first = next((line for _, line in lines if line.get("type") in TREE_TYPES), None)
    return None if first is None else SubagentStart(journal, first)


class AnchorIndex:
    """What `anchor` searches in the lines of a session read so far: their uuids, the `Task` calls by
    prompt (the first call of each prompt), the first message. O(1) a line."""

    def __init__(self) -> None:
        self.uuids: set[str] = set()
        self.prompts: dict[str, tuple[str, str]] = {}
        self.first_message: str | None = None

    def see(self, line: Mapping[str, Any]) -> None:
        uuid = line.get("uuid")
        if not isinstance(uuid, str):
            return
        self.uuids.add(uuid)
        kind = line.get("type")
        if self.first_message is None and kind in ("user", "assistant"):
            self.first_message = uuid
        if kind != "assistant":
            return
        for block in blocks_of(dict(line)):
            arguments = block.get("input")
            if block.get("type") == "tool_use" and isinstance(arguments, dict):
                prompt = arguments.get("prompt")
                if isinstance(prompt, str):
                    self.prompts.setdefault(prompt, (uuid, str(block.get("id"))))

    def anchor(self, first: Mapping[str, Any]) -> Anchor | None:
        """Where a sub-agent whose first line is `first` hangs from, among the lines seen.

        Its first line's `parentUuid`, if that is a line of the session (a compaction's summarizer); else
        the `Task` call whose prompt is the sub-agent's first prompt (older versions record no agent id);
        else the session's first message (a warm-up agent, which no call starts). Each is an inference,
        and the anchor's reason says which; None for a session with no message yet.
        """
        parent = first.get("parentUuid")
        if isinstance(parent, str) and parent in self.uuids:
            why = "claude-code: the sub-agent's first line continues this one (inferred)"
            return Anchor(parent, None, why)
        prompt = "\n".join(b["text"] for b in blocks_of(dict(first)) if isinstance(b.get("text"), str))
        if prompt in self.prompts:
            uuid, call = self.prompts[prompt]
            return Anchor(uuid, call, "claude-code: its prompt is this call's (inferred)")
        if self.first_message is None:
            return None
        reason = "claude-code: found beside the session; no tool call started it (a warm-up agent, inferred)"
        return Anchor(self.first_message, None, reason)


def subagent_anchor(session: bytes | str, agent: bytes | str) -> Anchor | None:
    """Where the sub-agent transcript `agent` hangs from in the whole of `session` (see
    `AnchorIndex.anchor`); None for a session with no message, or a transcript with no line."""
    start = subagent_start("", agent)
    if start is None:
        return None
    index = AnchorIndex()
    for _, line in read_json_lines(session, source=SOURCE, lenient=True)[0]:
        index.see(line)
    return index.anchor(start.first)
