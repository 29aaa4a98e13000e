"""Small valid inputs of each foreign format: the garbage is grown from these."""

from __future__ import annotations

from typing import Any

T0 = "2026-01-01T00:00:00.000Z"

CLAUDE_CODE: list[dict[str, Any]] = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s1",
        "timestamp": T0,
        "message": {"role": "user", "content": "hi"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "s1",
        "timestamp": T0,
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "claude",
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            ],
            "stop_reason": "tool_use",
        },
    },
    {
        "type": "user",
        "uuid": "u2",
        "parentUuid": "a1",
        "sessionId": "s1",
        "timestamp": T0,
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
        "toolUseResult": {"stdout": "ok"},
    },
]

CODEX: list[dict[str, Any]] = [
    {"timestamp": T0, "type": "session_meta", "payload": {"id": "c1", "timestamp": T0, "cwd": "/w"}},
    {
        "timestamp": T0,
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    },
    {
        "timestamp": T0,
        "type": "response_item",
        "payload": {"type": "function_call", "name": "shell", "arguments": '{"cmd": "ls"}', "call_id": "k1"},
    },
    {
        "timestamp": T0,
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "k1", "output": "ok"},
    },
    {
        "timestamp": T0,
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "done"}],
        },
    },
]

PI: list[dict[str, Any]] = [
    {"type": "session", "version": 3, "id": "p1", "timestamp": T0, "cwd": "/w"},
    {
        "type": "message",
        "id": "e1",
        "parentId": None,
        "timestamp": T0,
        "message": {"role": "user", "content": "hi", "timestamp": 1},
    },
    {
        "type": "message",
        "id": "e2",
        "parentId": "e1",
        "timestamp": T0,
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "x"}}],
            "model": "m",
            "stopReason": "toolUse",
        },
    },
    {
        "type": "message",
        "id": "e3",
        "parentId": "e2",
        "timestamp": T0,
        "message": {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "read",
            "content": [{"type": "text", "text": "ok"}],
            "isError": False,
            "timestamp": 2,
        },
    },
]

OPENAI_AGENTS: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "x"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
]
