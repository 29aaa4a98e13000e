"""What each provider accepts, checked by the consumer: its own SDK's request types, plus the pairing rules
its documentation states (types cannot say "a result follows its call").

The SDK types are TypedDicts; pydantic validates them with `extra="forbid"`, and a content list (an
`Iterable[...]` in the SDK) is walked so every block is validated, not only the first touched. Blocks are
validated again against the SDKs' block *param* unions alone, since the message unions also take the
response models, which accept any extra key.

Pairing rules, from the providers' documentation:
- Anthropic, "How to implement tool use" (docs.claude.com/en/docs/agents-and-tools/tool-use/
  implement-tool-use, "Handling results from client tools"): "Tool result blocks must immediately follow
  their corresponding tool use blocks in the message history. You cannot include any messages between the
  assistant's tool use message and the user's tool result message." and "In the user message containing
  tool results, the tool_result blocks must come FIRST in the content array." The API refuses a request
  whose `tool_use` ids have no `tool_result` in the next message ("tool_use ids were found without
  tool_result blocks immediately after"), and a `tool_result` whose id is not a `tool_use` of the message
  before. The Messages API reference (`messages`: "Our models are trained to operate on alternating user
  and assistant conversational turns"; the system prompt is the top-level `system` parameter). Tool use
  ids match `^[a-zA-Z0-9_-]+$` (the API's pattern), and text blocks must hold non-whitespace text; a final
  assistant message may not end with whitespace.
- OpenAI Chat Completions, "Function calling" guide (platform.openai.com/docs/guides/function-calling):
  the tool outputs are appended as `tool` messages with the `tool_call_id` of each call; the API refuses
  "messages with role 'tool' must be a response to a preceding message with 'tool_calls'" and "An
  assistant message with 'tool_calls' must be followed by tool messages responding to each
  'tool_call_id'".
- OpenAI Responses, same guide ("function_call_output" items with the call's `call_id`): the API refuses
  "No tool output found for function call <call_id>" and "No tool call found for function call output
  with call_id <call_id>".
"""

from __future__ import annotations

import re
from typing import Any

from anthropic.types import ContentBlockParam, MessageParam, TextBlockParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import ConfigDict, TypeAdapter

_STRICT = ConfigDict(extra="forbid")
ANTHROPIC_MESSAGE = TypeAdapter(MessageParam, config=_STRICT)
ANTHROPIC_BLOCK = TypeAdapter(ContentBlockParam, config=_STRICT)
ANTHROPIC_SYSTEM = TypeAdapter(str | list[TextBlockParam], config=_STRICT)
OPENAI_CHAT_MESSAGE = TypeAdapter(ChatCompletionMessageParam, config=_STRICT)
OPENAI_RESPONSES_ITEM = TypeAdapter(ResponseInputItemParam, config=_STRICT)
_ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _walk(value: Any) -> Any:
    """Every lazily validated iterable inside `value` consumed (pydantic validates an Iterable field only
    as it is iterated)."""
    if isinstance(value, dict):
        return {k: _walk(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_walk(v) for v in value]
    return value


def anthropic_problems(messages: Any, system: Any = None) -> list[str]:
    """Every way `messages` (and `system`) break the Messages API's types or documented rules."""
    found: list[str] = []
    if system is not None:
        try:
            _walk(ANTHROPIC_SYSTEM.validate_python(system))
        except ValueError as exc:
            found.append(f"system: {exc}")
    if not messages:
        return [*found, "messages must not be empty"]
    previous_calls: set[str] = set()
    seen_ids: set[str] = set()
    for n, message in enumerate(messages):
        where = f"message {n}"
        try:
            _walk(ANTHROPIC_MESSAGE.validate_python(message))
        except ValueError as exc:
            found.append(f"{where}: {str(exc)[:400]}")
            continue
        role = message["role"]
        if role not in ("user", "assistant"):
            found.append(f"{where}: role {role!r} (a system prompt is the top-level `system`)")
        if n == 0 and role != "user":
            found.append("the first message must be a user message")
        if n and messages[n - 1]["role"] == role:
            found.append(f"{where}: two {role} messages in a row (roles alternate)")
        blocks = message["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if not blocks:
            found.append(f"{where}: empty content")
        for block in blocks:
            try:
                _walk(ANTHROPIC_BLOCK.validate_python(block))
            except ValueError as exc:
                found.append(f"{where}: block {str(exc)[:300]}")
            if block.get("type") == "text" and not block["text"].strip():
                found.append(f"{where}: a text block must hold non-whitespace text")
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results and blocks[: len(results)] != results:
            found.append(f"{where}: tool_result blocks must come first in the content")
        answered = {b["tool_use_id"] for b in results}
        if previous_calls - answered:
            found.append(f"{where}: tool_use ids {sorted(previous_calls - answered)} have no tool_result")
        if answered - previous_calls:
            found.append(f"{where}: tool_result ids {sorted(answered - previous_calls)} answer no tool_use")
        calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        for call in calls:
            if not _ANTHROPIC_ID.fullmatch(call):
                found.append(f"{where}: tool_use id {call!r} does not match ^[a-zA-Z0-9_-]+$")
            if call in seen_ids:
                found.append(f"{where}: tool_use id {call!r} used twice")
            seen_ids.add(call)
        previous_calls = set(calls) if role == "assistant" else set()
    if previous_calls:
        found.append(f"tool_use ids {sorted(previous_calls)} in the last message have no tool_result")
    last = messages[-1]
    if last["role"] == "assistant" and isinstance(last["content"], list) and last["content"]:
        tail = last["content"][-1]
        if tail.get("type") == "text" and tail["text"] != tail["text"].rstrip():
            found.append("the final assistant text ends with whitespace")
    return found


def openai_chat_problems(messages: Any) -> list[str]:
    """Every way `messages` break Chat Completions' types or documented tool pairing."""
    found: list[str] = []
    open_calls: set[str] = set()
    for n, message in enumerate(messages):
        where = f"message {n}"
        try:
            _walk(OPENAI_CHAT_MESSAGE.validate_python(message))
        except ValueError as exc:
            found.append(f"{where}: {str(exc)[:400]}")
            continue
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                found.append(f"{where}: a tool message answers no open call of the assistant before it")
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            found.append(f"{where}: tool calls {sorted(open_calls)} are not answered before it")
        calls = message.get("tool_calls") or () if role == "assistant" else ()
        open_calls = {call["id"] for call in calls}
        if role == "assistant" and not message.get("content") and not message.get("tool_calls"):
            found.append(f"{where}: an assistant message needs content or tool calls")
    if open_calls:
        found.append(f"tool calls {sorted(open_calls)} are never answered")
    return found


def openai_responses_problems(items: Any) -> list[str]:
    """Every way `items` break the Responses API's input item types or its call/output pairing."""
    found: list[str] = []
    calls: list[str] = []
    outputs: list[str] = []
    for n, item in enumerate(items):
        try:
            _walk(OPENAI_RESPONSES_ITEM.validate_python(item))
        except ValueError as exc:
            found.append(f"item {n}: {str(exc)[:400]}")
            continue
        if item.get("type") == "function_call":
            calls.append(item["call_id"])
        elif item.get("type") == "function_call_output":
            if item["call_id"] not in calls:
                found.append(f"item {n}: no tool call found for function call output {item['call_id']!r}")
            outputs.append(item["call_id"])
    for call in calls:
        if call not in outputs:
            found.append(f"no tool output found for function call {call!r}")
    if len(set(calls)) != len(calls):
        found.append("a call_id is used by two function calls")
    return found


def provider_problems(context: Any) -> list[str]:
    """Every rule a `ProviderContext` breaks for its own provider."""
    messages = list(context.messages)
    if context.provider == "anthropic":
        return anthropic_problems(messages, context.system) if messages else []
    if context.provider == "openai-chat":
        return openai_chat_problems(messages)
    return openai_responses_problems(messages)
