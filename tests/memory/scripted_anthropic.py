"""A scripted Messages API for the SDK's client: each request gets the next canned reply, no network."""

from __future__ import annotations

import json
from typing import Any

import httpx2


class ScriptedModel:
    """Replies with one scripted assistant turn per request and keeps every request body it saw."""

    def __init__(self, turns: list[list[dict[str, Any]]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        content = self.turns.pop(0)
        uses_tools = any(block["type"] == "tool_use" for block in content)
        reply = {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "content": content,
            "stop_reason": "tool_use" if uses_tools else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx2.Response(200, json=reply)

    def tool_results(self) -> dict[str, dict[str, Any]]:
        """Every tool_result block the runner sent back, by tool_use_id."""
        return {
            block["tool_use_id"]: block
            for body in self.requests
            for message in body["messages"]
            if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        }

    def client(self) -> Any:
        import anthropic

        transport = httpx2.MockTransport(self.handle)
        return anthropic.Anthropic(api_key="scripted", http_client=httpx2.Client(transport=transport))

    def async_client(self) -> Any:
        import anthropic

        transport = httpx2.MockTransport(self.handle)
        return anthropic.AsyncAnthropic(
            api_key="scripted", http_client=httpx2.AsyncClient(transport=transport)
        )


def memory_call(call_id: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "memory", "input": tool_input}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}
