"""Google ADK events for the ADK adapter's tests (import it after `pytest.importorskip("google.adk")`)."""

from __future__ import annotations

from typing import Any

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

APP, USER = "app", "u1"


def event(
    text: str, *, delta: dict[str, Any] | None = None, timestamp: float | None = None, **kw: Any
) -> Event:
    fields: dict[str, Any] = {
        "author": "user",
        "invocation_id": "inv-1",
        "content": types.Content(role="user", parts=[types.Part(text=text)]),
        "actions": EventActions(state_delta=delta or {}),
        **kw,
    }
    if timestamp is not None:
        fields["timestamp"] = timestamp
    return Event(**fields)


def texts(session: Any) -> list[str]:
    return [e.content.parts[0].text for e in session.events]
