"""Pi session lines for the Pi codec's tests: a v3 header, entries, user and assistant messages."""

from __future__ import annotations

import json

HEADER_V3 = {
    "type": "session",
    "version": 3,
    "id": "s-3",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/w",
}


def pi_lines(*entries: dict) -> str:  # type: ignore[type-arg]
    return "\n".join(json.dumps(e) for e in entries) + "\n"


def entry(kind: str, entry_id: str, parent: str | None, **fields: object) -> dict:  # type: ignore[type-arg]
    return {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        **fields,
    }


def user(entry_id: str, parent: str | None, text: str) -> dict:  # type: ignore[type-arg]
    return entry("message", entry_id, parent, message={"role": "user", "content": text, "timestamp": 1})


def answer(entry_id: str, parent: str | None, text: str, stop: str = "stop") -> dict:  # type: ignore[type-arg]
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "model": "m",
        "stopReason": stop,
    }
    return entry("message", entry_id, parent, message=message)
