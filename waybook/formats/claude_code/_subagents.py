"""Where a Claude Code sub-agent's transcript hangs from in its session, when no tool result names it."""

from __future__ import annotations

import attrs

from waybook.formats._foreign import read_json_lines
from waybook.formats.claude_code._context import SOURCE, TREE_TYPES, blocks_of


@attrs.frozen
class Anchor:
    """Where a sub-agent found beside a session hangs from: a line of the session, and how we know."""

    uuid: str
    call_id: str | None
    reason: str


def subagent_anchor(session: bytes | str, agent: bytes | str) -> Anchor | None:
    """Where the sub-agent transcript `agent` hangs from in `session`, when no tool result names it.

    Its first line's `parentUuid`, if that is a line of the session (a compaction's summarizer); else the
    `Task` call whose prompt is the sub-agent's first prompt (older versions record no agent id); else the
    session's first message (a warm-up agent, which no call starts). Each is an inference, and the
    anchor's reason says which; None only for a session with no message.
    """
    parent_lines, _, _ = read_json_lines(session, source=SOURCE, lenient=True)
    agent_lines, _, _ = read_json_lines(agent, source=SOURCE, lenient=True)
    uuids = {line["uuid"] for _, line in parent_lines if isinstance(line.get("uuid"), str)}
    first = next((line for _, line in agent_lines if line.get("type") in TREE_TYPES), None)
    if first is None:
        return None
    if first.get("parentUuid") in uuids:
        return Anchor(
            first["parentUuid"], None, "claude-code: the sub-agent's first line continues this one (inferred)"
        )
    prompt = "\n".join(b["text"] for b in blocks_of(first) if isinstance(b.get("text"), str))
    for _, line in parent_lines:
        for block in blocks_of(line) if line.get("type") == "assistant" else []:
            arguments = block.get("input")
            if (
                block.get("type") == "tool_use"
                and isinstance(arguments, dict)
                and arguments.get("prompt") == prompt
            ):
                return Anchor(
                    line["uuid"], str(block.get("id")), "claude-code: its prompt is this call's (inferred)"
                )
    first_message = next(
        (line for _, line in parent_lines if line.get("type") in ("user", "assistant") and "uuid" in line),
        None,
    )
    if first_message is None:
        return None
    reason = "claude-code: found beside the session; no tool call started it (a warm-up agent, inferred)"
    return Anchor(first_message["uuid"], None, reason)
