"""The rules of OpenAI's chat fine-tuning format, checked on a row: what a training upload accepts.

From OpenAI's fine-tuning guide and its data-format checks: a row has a non-empty `messages` list (and
optionally `tools` and `parallel_tool_calls`); each message has a known role and only known keys;
`content` is a string, or a list of content parts (`text`, and `image_url` with a `data:image/...;base64`
or `http(s)` URL, in user messages only: the vision fine-tuning rules, which also take JPEG, PNG and WEBP
only, 10 MB at most each, 10 images at most per row), or null only for an assistant
message with tool calls; an assistant message has
content or tool calls; tool calls are functions with string JSON arguments and unique ids; every tool
call of an assistant message that is not the last message is answered by the tool messages right after
it; a tool message answers a call; `weight` is 0 or 1 on assistant messages; there is at least one
assistant message. The format checks mirror OpenAI's cookbook "Data preparation and analysis for chat
model fine-tuning" (its error kinds: data_type, missing_messages_list, message_missing_key,
message_unrecognized_key, unrecognized_role, missing_content, example_missing_assistant_message), plus
the function-calling rules of the fine-tuning guide: a row whose assistant messages call functions lists
them in `tools` (each called name defined there), and `parallel_tool_calls` is a boolean. No other
top-level key is documented: a row holds none (waybook's provenance `metadata` only when asked,
`--metadata`, and then `problems(row, extra={"metadata"})`).
"""

from __future__ import annotations

import json
from typing import Any, Final

from waybook.codecs import base64_payload

ROW_KEYS: Final = frozenset({"messages", "tools", "parallel_tool_calls"})
ROLES: Final = frozenset({"system", "user", "assistant", "tool"})
MESSAGE_KEYS: Final = frozenset({"role", "content", "name", "weight", "tool_calls", "tool_call_id"})
IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp"})
MAX_IMAGE_BYTES: Final = 10 * 1024 * 1024
"""OpenAI's vision fine-tuning: at most 10 MB per image, and 10 images per example."""
MAX_IMAGES_PER_ROW: Final = 10


def problems(row: Any, *, extra: frozenset[str] = frozenset()) -> list[str]:
    """Every rule `row` breaks (empty when it is a valid training row); `extra`: top-level keys to allow
    beyond the documented ones."""
    if not isinstance(row, dict):
        return ["a row must be a JSON object"]
    found = [f"unknown row key {k!r}" for k in sorted(set(row) - ROW_KEYS - extra)]
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*found, "messages must be a non-empty list"]
    open_calls: set[str] = set()
    seen_ids: set[str] = set()
    for n, message in enumerate(messages):
        where = f"message {n}"
        if not isinstance(message, dict):
            found.append(f"{where} is not an object")
            continue
        role = message.get("role")
        found += [f"{where}: unknown key {k!r}" for k in sorted(set(message) - MESSAGE_KEYS)]
        if role not in ROLES:
            found.append(f"{where}: unknown role {role!r}")
        if role != "tool" and open_calls:
            found.append(f"{where}: tool calls {sorted(open_calls)} were not answered before it")
            open_calls = set()
        content, calls = message.get("content"), message.get("tool_calls")
        if content is None and not (role == "assistant" and calls):
            found.append(f"{where}: content is missing")
        elif isinstance(content, list):
            found += _parts_problems(content, role, where)
        elif content is not None and not isinstance(content, str):
            found.append(f"{where}: content must be a string or a list of content parts")
        if role == "assistant" and not content and not calls:
            found.append(f"{where}: an assistant message needs content or tool calls")
        if "weight" in message and (role != "assistant" or message["weight"] not in (0, 1)):
            found.append(f"{where}: weight must be 0 or 1, on assistant messages only")
        if calls is not None:
            if role != "assistant" or not isinstance(calls, list) or not calls:
                found.append(f"{where}: tool_calls must be a non-empty list on an assistant message")
                continue
            for call in calls:
                found += _call_problems(call, where, seen_ids)
                if isinstance(call, dict) and isinstance(call.get("id"), str):
                    open_calls.add(call["id"])
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                found.append(f"{where}: tool_call_id {call_id!r} answers no open tool call")
            open_calls.discard(call_id)
    if not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages):
        found.append("a row needs at least one assistant message")
    images = sum(
        1
        for m in messages
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )
    if images > MAX_IMAGES_PER_ROW:
        found.append(f"a row may hold at most {MAX_IMAGES_PER_ROW} images, not {images}")
    found += _tools_problems(row.get("tools"))
    called = {
        call["function"]["name"]
        for m in messages
        if isinstance(m, dict)
        for call in m.get("tool_calls") or ()
        if isinstance(call, dict) and isinstance(call.get("function"), dict)
    }
    defined = {
        t["function"].get("name")
        for t in row.get("tools") or ()
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    }
    if called - defined:
        found.append(f"functions {sorted(called - defined)} are called but not defined in tools")
    if "parallel_tool_calls" in row and not isinstance(row["parallel_tool_calls"], bool):
        found.append("parallel_tool_calls must be a boolean")
    return found


def _parts_problems(parts: list[Any], role: Any, where: str) -> list[str]:
    if not parts:
        return [f"{where}: a content list must not be empty"]
    found = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind != "image_url":
            found.append(f"{where}: a content part must be text or image_url, not {part!r:.80}")
            continue
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        if role != "user":
            found.append(f"{where}: images are accepted in user messages only")
        elif not isinstance(url, str):
            found.append(f"{where}: an image_url needs a url")
        elif not url.startswith(("https://", "http://")):
            found += _data_url_problems(url, where)
    return found


def _data_url_problems(url: str, where: str) -> list[str]:
    head, comma, _ = url.partition(",")
    media = head.removeprefix("data:").removesuffix(";base64")
    if not (head.startswith("data:") and head.endswith(";base64") and comma):
        return [f"{where}: an image_url needs an http(s) URL or a data:<image type>;base64, URL"]
    if media not in IMAGE_TYPES:
        return [f"{where}: image type {media!r} is not one OpenAI takes (JPEG, PNG or WEBP)"]
    decoded = base64_payload(url)
    if decoded is None:
        return [f"{where}: an image's data is not base64"]
    size = len(decoded)
    if size == 0:
        return [f"{where}: an image has no bytes"]
    if size > MAX_IMAGE_BYTES:
        return [f"{where}: an image of {size:,} bytes is over OpenAI's 10 MB"]
    return []


def _call_problems(call: Any, where: str, seen_ids: set[str]) -> list[str]:
    if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(call.get("id"), str):
        return [f"{where}: a tool call needs an id and type 'function'"]
    found = []
    if call["id"] in seen_ids:
        found.append(f"{where}: tool call id {call['id']!r} is used twice")
    seen_ids.add(call["id"])
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
        return [*found, f"{where}: a tool call needs a function name"]
    arguments = function.get("arguments")
    try:
        json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        arguments = None
    if not isinstance(arguments, str):
        found.append(f"{where}: tool call arguments must be a JSON string")
    return found


def _tools_problems(tools: Any) -> list[str]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        return ["tools must be a list"]
    return [
        f"tool {n} must be {{'type': 'function', 'function': {{'name': ...}}}}"
        for n, tool in enumerate(tools)
        if not (
            isinstance(tool, dict)
            and tool.get("type") == "function"
            and isinstance(tool.get("function"), dict)
            and isinstance(tool["function"].get("name"), str)
        )
    ]
