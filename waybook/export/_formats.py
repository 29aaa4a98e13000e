"""Neutral messages as the rows the trainers load: TRL's conversational shapes, LLaMA-Factory's ShareGPT,
OpenAI's DPO, and the tool list a row with tool calls carries.

- TRL (huggingface.co/docs/trl/dataset_formats): conversational messages `{"role", "content"}`; an
  assistant's tool calls as `{"type": "function", "function": {"name", "arguments": {...}}}` (arguments
  an object, as chat templates read them), a tool message with the tool's `name`; thinking, when kept
  (`--thinking field`), as the assistant's `reasoning_content`, which chat templates with a thinking
  section read. SFT rows are `{"messages", "tools"}`, per-turn rows `{"prompt", "completion", "tools"}`
  (completion-only loss), DPO `{"prompt", "chosen", "rejected"}`, KTO `{"prompt", "completion", "label"}`.
- ShareGPT as LLaMA-Factory's `SharegptDatasetConverter` (src/llamafactory/data/converter.py) accepts it:
  an optional system turn first, then turns alternating human|observation and gpt|function_call, an even
  count (ending with gpt or function_call); any other row is skipped by LLaMA-Factory as "abnormal".
  A `function_call` value is the JSON of `{"name", "arguments"}`, or a list of them for parallel calls
  (its FunctionFormatter parses either); the results of parallel calls are one observation, joined as
  LLaMA-Factory's own OpenAI converter joins them. `system` and `tools` (a JSON string) are columns.
- OpenAI DPO (platform.openai.com/docs/guides/direct-preference-optimization): `{"input": {"messages",
  "tools"?}, "preferred_output": [one assistant message], "non_preferred_output": [one]}`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

from waybook.export._cleaning import Message
from waybook.export._rows import openai_message

OBSERVATION_JOIN: Final = "\n</tool_response>\n<tool_response>\n"
"""How LLaMA-Factory's OpenAI converter joins the results of parallel calls into one observation."""
NO_OUTPUT: Final = "(no output)"
_JSON_TYPES: Final = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))


def tools_for(messages: list[Message], recorded: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The tools a row lists: those the session's header recorded, plus, for each function the row calls
    that they do not name, a schema inferred from its calls' arguments. None when there are neither."""
    tools = list(recorded or [])
    named = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
    seen: dict[str, dict[str, str]] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.name in named:
                continue
            properties = seen.setdefault(call.name, {})
            for key, value in call.arguments.items():
                properties.setdefault(key, _json_type(value))
    for name, properties in seen.items():
        parameters = {
            "type": "object",
            "properties": {key: {"type": kind} for key, kind in sorted(properties.items())},
        }
        tools.append({"type": "function", "function": {"name": name, "parameters": parameters}})
    return tools or None


def _json_type(value: Any) -> str:
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "string"


def trl_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """`messages` in TRL's conversational form (text content; images are placeholders in the text)."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        rendered: dict[str, Any] = {"role": message.role, "content": _text(message)}
        if message.thinking:
            rendered["reasoning_content"] = message.thinking
        if message.tool_calls:
            rendered["tool_calls"] = [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ]
            names.update((c.call_id, c.name) for c in message.tool_calls)
        if message.tool_call_id is not None:
            rendered["name"] = names.get(message.tool_call_id, "")
            rendered["tool_call_id"] = message.tool_call_id
        out.append(rendered)
    return out


def _text(message: Message) -> str:
    if not message.parts:
        return message.text
    return "\n\n".join(p if isinstance(p, str) else f"[image: {p.media_type}]" for p in message.parts)


_SHAREGPT_ODD: Final = frozenset({"human", "observation"})


def sharegpt_row(
    messages: list[Message], tools: list[dict[str, Any]] | None, dropped: Counter[str]
) -> dict[str, Any] | None:
    """A row LLaMA-Factory's ShareGPT converter takes, or None when nothing trainable is left (counted)."""
    system: list[str] = []
    turns: list[list[str]] = []  # [tag, value]
    for message in messages:
        tag, value = _sharegpt_turn(message, bool(turns), dropped)
        if tag == "system":
            system.append(value)
            continue
        if turns and (turns[-1][0] in _SHAREGPT_ODD) == (tag in _SHAREGPT_ODD):
            _join(turns[-1], tag, value, dropped)
        else:
            turns.append([tag, value])
    while turns and turns[0][0] not in ("human",):
        dropped[f"ShareGPT {turns.pop(0)[0]} turns before the first human turn"] += 1
    while turns and turns[-1][0] in _SHAREGPT_ODD:
        dropped[f"ShareGPT {turns.pop()[0]} turns after the last gpt turn"] += 1
    if not turns:
        dropped["rows with no human turn answered (ShareGPT)"] += 1
        return None
    return {
        "conversations": [{"from": tag, "value": value} for tag, value in turns],
        "system": "\n\n".join(system),
        "tools": json.dumps(tools, ensure_ascii=False, sort_keys=True) if tools else "",
    }


def _sharegpt_turn(message: Message, started: bool, dropped: Counter[str]) -> tuple[str, str]:
    text = _text(message)
    if message.role == "system":
        if not started:
            return "system", text
        dropped["system messages inside a conversation (ShareGPT: as human turns)"] += 1
        return "human", text
    if message.role == "user":
        return "human", text
    if message.role == "tool":
        if not text:
            dropped[f"empty tool results (ShareGPT: written {NO_OUTPUT})"] += 1
        return "observation", text or NO_OUTPUT
    if not message.tool_calls:
        return "gpt", text
    if text:
        dropped["assistant text beside tool calls (ShareGPT's function_call turn holds the calls)"] += 1
    calls = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    return "function_call", json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)


def _join(last: list[str], tag: str, value: str, dropped: Counter[str]) -> None:
    """Two turns of one parity in a row become one, so the roles alternate as LLaMA-Factory requires."""
    if last[0] == tag == "observation":
        last[1] = f"{last[1]}{OBSERVATION_JOIN}{value}"
    elif last[0] == tag and tag in ("human", "gpt"):
        last[1] = f"{last[1]}\n\n{value}"
    elif tag == "function_call" and last[0] == "gpt":
        dropped["assistant text beside tool calls (ShareGPT's function_call turn holds the calls)"] += 1
        last[:] = [tag, value]
    elif tag == "function_call" and last[0] == "function_call":
        calls = [*_as_list(json.loads(last[1])), *_as_list(json.loads(value))]
        last[1] = json.dumps(calls, ensure_ascii=False)
    elif tag == "human" and last[0] == "observation":
        dropped["user messages right after tool results (ShareGPT: joined to the observation)"] += 1
        last[1] = f"{last[1]}\n\n{value}"
    else:  # gpt right after function_call: the calls' results were left out
        dropped["ShareGPT turns that break the alternation"] += 1


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def openai_dpo_row(
    prompt: list[dict[str, Any]],
    chosen: Message,
    rejected: Message,
    tools: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    source: dict[str, Any] = {"messages": prompt}
    if tools:
        source["tools"] = tools
    return {
        "input": source,
        "preferred_output": [openai_message(chosen)],
        "non_preferred_output": [openai_message(rejected)],
    }
