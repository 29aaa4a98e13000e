"""Claude Code transcript lines for the Claude Code importer's tests (and the exports' that import one)."""

from __future__ import annotations

import json
from typing import Any


class Transcript:
    """Builds Claude Code lines: each new line's parent is the previous one unless told otherwise."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None

    def add(self, kind: str, parent: str | bool | None = True, **fields: Any) -> str:
        uuid = f"u{len(self.lines) + 1:02d}-0000-0000-0000-000000000000"
        line = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self.last if parent is True else parent,
            "sessionId": "s-1",
            "timestamp": f"2026-02-10T21:00:{len(self.lines):02d}.000Z",
            **fields,
        }
        self.lines.append(line)
        self.last = uuid
        return uuid

    def user(self, content: Any, parent: str | bool | None = True, **fields: Any) -> str:
        return self.add("user", parent, message={"role": "user", "content": content}, **fields)

    def assistant(
        self, message_id: str, *blocks: dict[str, Any], stop: str | None = None, parent: Any = True
    ) -> str:
        message = {
            "id": message_id,
            "role": "assistant",
            "model": "m",
            "content": list(blocks),
            "stop_reason": stop,
        }
        return self.add("assistant", parent, message=message)

    def text(self) -> str:
        return "\n".join(json.dumps(line) for line in self.lines) + "\n"


def short_transcript(session_id: str = "s-1", **fields: Any) -> str:
    """A two-line Claude Code transcript (a prompt, its answer) of session `session_id`; `fields` are set
    on both lines (`isSidechain=True, agentId="a1"` makes it a sub-agent's)."""
    lines = Transcript()
    lines.user("the secret is 1234")
    lines.assistant("m1", {"type": "text", "text": "noted"}, stop="end_turn")
    return "".join(json.dumps({**line, "sessionId": session_id, **fields}) + "\n" for line in lines.lines)
