"""What the trainers accept, mirrored from their source where the trainer does not install without a GPU
stack, each rule cited.

- LLaMA-Factory, `src/llamafactory/data/converter.py`, `SharegptDatasetConverter.__call__`: a first
  message whose tag is the system tag is the system prompt; every other message's tag must be in
  `(user_tag, observation_tag)` at even indexes and `(assistant_tag, function_tag)` at odd indexes
  (`accept_tags[turn_idx % 2]`), and a non-ranking example needs an even count; otherwise it logs
  "Invalid role tag" / "Invalid message count" and skips the example ("Skipping this abnormal example").
  Default tags (`data/parser.py`, DatasetAttr): human, gpt, observation, function_call, system; columns
  `conversations`, `system`, `tools`. A `function_call` value is parsed by `FunctionFormatter`
  (`src/llamafactory/data/formatter.py`) as JSON: an object with `name` and `arguments`, or a list of
  them. The KTO form is the same conversation with a boolean `kto_tag` column.
- TRL, "Dataset formats and types" (huggingface.co/docs/trl/dataset_formats): conversational columns are
  lists of `{"role", "content"}` messages; language modeling `messages`; prompt-completion `prompt` +
  `completion`; preference `prompt` + `chosen` + `rejected`; unpaired preference `prompt` + `completion`
  + `label` (bool). Tool calls: `{"type": "function", "function": {"name", "arguments": {...}}}` on an
  assistant message; a `tools` column of JSON schemas.
- OpenAI DPO ("Direct preference optimization" guide): `input` (`messages`, optional `tools`),
  `preferred_output` and `non_preferred_output`, each a list holding one assistant message.
"""

from __future__ import annotations

import json
from typing import Any

ODD = ("human", "observation")
EVEN = ("gpt", "function_call")


def llama_factory_problems(row: Any) -> list[str]:
    """Why LLaMA-Factory's ShareGPT converter would skip `row` (empty: it trains on it)."""
    found: list[str] = []
    messages = list(row.get("conversations") or [])
    if messages and messages[0]["from"] == "system":
        messages = messages[1:]
    for index, message in enumerate(messages):
        accept = (ODD, EVEN)[index % 2]
        if message["from"] not in accept:
            found.append(f"turn {index}: {message['from']!r} where {accept} is required (Invalid role tag)")
            break
        if not isinstance(message["value"], str):
            found.append(f"turn {index}: value must be a string")
        if message["from"] == "function_call":
            try:
                calls = json.loads(message["value"])
            except ValueError:
                found.append(f"turn {index}: a function_call value must be JSON")
                continue
            for call in calls if isinstance(calls, list) else [calls]:
                if not (isinstance(call, dict) and "name" in call and "arguments" in call):
                    found.append(f"turn {index}: a function call needs name and arguments")
        if message["from"] == "observation" and not message["value"].strip():
            found.append(f"turn {index}: an empty observation")
    if not messages or len(messages) % 2:
        found.append(f"{len(messages)} turns: an example needs an even count (Invalid message count)")
    for column in ("system", "tools"):
        if not isinstance(row.get(column), str):
            found.append(f"column {column} must be a string")
    return found


def _trl_message_problems(message: Any, where: str) -> list[str]:
    if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "tool"):
        return [f"{where}: a message needs a known role"]
    found = []
    if not isinstance(message.get("content"), str):
        found.append(f"{where}: content must be a string")
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if call.get("type") != "function" or not isinstance(function, dict):
            found.append(f"{where}: a tool call is {{'type': 'function', 'function': ...}}")
        elif not isinstance(function.get("name"), str) or not isinstance(function.get("arguments"), dict):
            found.append(f"{where}: a tool call's function has a name and an arguments object")
    if "reasoning_content" in message and message["role"] != "assistant":
        found.append(f"{where}: reasoning_content belongs to assistant messages")
    return found


def trl_problems(row: Any, kind: str) -> list[str]:
    """Why `row` is not a TRL conversational row of `kind` (sft, prompt-completion, preference, kto)."""
    columns = {
        "sft": ("messages",),
        "prompt-completion": ("prompt", "completion"),
        "preference": ("prompt", "chosen", "rejected"),
        "kto": ("prompt", "completion"),
    }[kind]
    found: list[str] = []
    for column in columns:
        messages = row.get(column)
        if not isinstance(messages, list) or (not messages and column != "prompt"):
            found.append(f"{column} must be a non-empty list of messages")
            continue
        for n, message in enumerate(messages):
            found += _trl_message_problems(message, f"{column}[{n}]")
    for column in ("completion", "chosen", "rejected"):
        if column in columns and not any(m.get("role") == "assistant" for m in row.get(column) or ()):
            found.append(f"{column} holds no assistant turn")
    if kind == "kto" and not isinstance(row.get("label"), bool):
        found.append("label must be a boolean")
    tools = row.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        found.append("tools must be a list of JSON schemas")
    return found


def openai_dpo_problems(row: Any) -> list[str]:
    from waybook.export._openai_format import problems

    keys = {"input", "preferred_output", "non_preferred_output"}
    found = [f"unknown key {k!r}" for k in sorted(set(row) - keys)]
    source = row.get("input")
    if not isinstance(source, dict) or not isinstance(source.get("messages"), list):
        return [*found, "input must hold messages"]
    for side in ("preferred_output", "non_preferred_output"):
        output = row.get(side)
        if not (isinstance(output, list) and len(output) == 1 and output[0].get("role") == "assistant"):
            found.append(f"{side} must be a list of one assistant message")
            continue
        whole = {"messages": [*source["messages"], *output]}
        if "tools" in source:
            whole["tools"] = source["tools"]
        found += [f"{side}: {p}" for p in problems(whole)]
    return found
