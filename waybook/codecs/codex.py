"""The Codex CLI's rollout JSONL, imported as waybook records.

A rollout line is `{timestamp, type, payload}`. Codex rebuilds what it sends to the model by replaying
the `response_item` payloads in order, replacing the whole history at a `compacted` line, and dropping
the last N user turns at a `thread_rolled_back` event (`replay_history` below does exactly that, and the
tests hold every import to it). Import maps:

- `session_meta`: the header (its payload in `metadata["codex"]`), and `base_instructions` as the
  first system message.
- A run of model output items (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
  `web_search_call`, ...): one terminal assistant message of thinking, text and tool-call blocks, with
  each item's other fields in `details["codex"]["items"]`. The stop reason is inferred (`tool_use` when
  the run ends with a call) and the inference is recorded.
- `function_call_output`, `custom_tool_call_output`: a tool result answering its call by `call_id`.
- User, developer and system `message`s: user and system messages.
- `compacted`: a reset, a `codex.compacted` entry holding the line, and the replacement history as the
  new root path, since Codex sends exactly that history afterwards. (Not a waybook compaction record:
  that one always renders its summary first, which is not what Codex sends.)
- `event_msg` `thread_rolled_back`: a leaf move back past the last N user turns (the dropped turns stay
  in the journal), and the event kept.
- Every other `event_msg`, `turn_context` and unknown line: a custom entry `codex.<type>` holding the
  line verbatim, out of the model context.

Ids are `cx-<line>` (deterministic), the header's id is the rollout's session id. A rollout forked from
another names it in `session_meta.forked_from_id`; the header's metadata keeps it as `forked_from`.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from waybook.codecs.foreign import (
    FALLBACK_TIMESTAMP,
    ForeignFormatError,
    ImportReport,
    LineTally,
    read_json_lines,
    stable_id,
    text_of,
    timestamp,
)
from waybook.journal.records import (
    AnyBody,
    AssistantMessage,
    Block,
    CustomEntry,
    Header,
    ImageBlock,
    LeafMoved,
    NewRecord,
    Reset,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

SOURCE: Final = "codex"
MODEL_ITEMS: Final = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
    }
)
"""Response items the model produces. A run of them (with assistant messages) is one assistant turn."""
CALL_ITEMS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
_CONTEXTUAL_USER_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<user_shell_command>",
)


@attrs.frozen
class CodexImport:
    records: tuple[NewRecord, ...]
    report: ImportReport


def import_codex(data: bytes | str, *, lenient: bool = False) -> CodexImport:
    """Map a Codex rollout file's content to the records of a new journal, with a report of every line."""
    lines, skipped, total = read_json_lines(data, source=SOURCE, lenient=lenient)
    builder = _Builder()
    problems: list[tuple[int, str]] = []
    for number, line in lines:
        try:
            builder.take(number, line)
        except (KeyError, TypeError, ValueError) as exc:
            problems.append((number, f"{type(exc).__name__}: {exc}"))
    if problems:
        raise ForeignFormatError(SOURCE, problems)
    builder.finish()
    if builder.header is None:
        raise ForeignFormatError(SOURCE, [(1, "no session_meta line: this is not a Codex rollout")])
    report = builder.tally.report(SOURCE, total, skipped, builder.inferred)
    return CodexImport(records=(builder.header, *builder.records), report=report)


# --- the reference: what Codex sends -----------------------------------------------------------------


def is_user_turn_boundary(item: Any) -> bool:
    """A user message that starts a turn (not one of the context messages Codex injects)."""
    if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
        return False
    for text in text_of(item.get("content")):
        if text.lstrip().lower().startswith(_CONTEXTUAL_USER_PREFIXES):
            return False
    return True


def replay_history(data: bytes | str) -> list[dict[str, Any]]:
    """The response items Codex sends after the last line of a rollout, replayed as Codex replays them."""
    lines, _, _ = read_json_lines(data, source=SOURCE, lenient=True)
    history: list[dict[str, Any]] = []
    for _, line in lines:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "response_item":
            history.append(payload)
        elif kind == "compacted":
            history = _after_compaction(history, payload)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            del history[_rollback_cut(history, payload.get("num_turns", 0)) :]
    return history


def _after_compaction(history: list[dict[str, Any]], payload: dict[str, Any]) -> list[dict[str, Any]]:
    replacement = payload.get("replacement_history")
    if isinstance(replacement, list):
        return [item for item in replacement if isinstance(item, dict)]
    first_user = next((i for i, item in enumerate(history) if is_user_turn_boundary(item)), len(history))
    users = [
        _user_message("\n".join(text_of(item.get("content"))))
        for item in history
        if is_user_turn_boundary(item)
    ]
    return [*history[:first_user], *users, _user_message(str(payload.get("message", "")))]


def _user_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollback_cut(history: list[dict[str, Any]], turns: Any) -> int:
    if not isinstance(turns, int) or turns <= 0:
        return len(history)
    users = [i for i, item in enumerate(history) if is_user_turn_boundary(item)]
    if not users:
        return len(history)
    return users[0] if turns >= len(users) else users[len(users) - turns]


# --- mapping -------------------------------------------------------------------------------------------


class _Builder:
    def __init__(self) -> None:
        self.header: NewRecord | None = None
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.at = FALLBACK_TIMESTAMP
        self.leaf: str | None = None
        self.model: str | None = None
        self.calls: dict[str, str] = {}  # call_id -> tool name
        self.history: list[tuple[dict[str, Any], str]] = []  # (item, node id) as Codex would send them
        self.turn: list[tuple[int, dict[str, Any]]] = []  # model items of the open assistant turn
        self.deferred: list[tuple[int, dict[str, Any]]] = []  # lines seen inside the open turn

    # lines

    def take(self, number: int, line: dict[str, Any]) -> None:
        self.at = timestamp(line.get("timestamp"), self.at)
        kind, payload = line.get("type"), line.get("payload")
        if kind == "response_item" and isinstance(payload, dict):
            self._item(number, payload)
        elif self.turn and kind != "compacted" and not _is_rollback(kind, payload):
            self.deferred.append((number, line))  # keeps the turn one record; emitted right after it
        else:
            self._other(number, line)

    def finish(self) -> None:
        self._close_turn()

    def _other(self, number: int, line: dict[str, Any]) -> None:
        kind, payload = line.get("type"), line.get("payload")
        if kind == "session_meta" and self.header is None and isinstance(payload, dict):
            self._session_meta(number, payload)
        elif kind == "compacted" and isinstance(payload, dict):
            self._close_turn()
            self._compacted(number, line, payload)
        elif _is_rollback(kind, payload):
            self._close_turn()
            self._rollback(number, line)
        else:
            if kind == "turn_context" and isinstance(payload, dict):
                self.model = payload.get("model", self.model)
            self._keep(number, line)

    def _item(self, number: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind in MODEL_ITEMS or (kind == "message" and item.get("role") == "assistant"):
            self.turn.append((number, item))
            return
        self._close_turn()
        if kind in OUTPUT_ITEMS:
            self._tool_result(number, item)
        elif kind == "message":
            self._message(number, item)
        else:
            self._node(number, _custom(f"codex.item.{kind}", item, self.leaf), [item])

    # records

    def _append(self, number: int, record_id: str, body: AnyBody) -> None:
        self.records.append(NewRecord(id=record_id, at=self.at, body=body))
        self.tally.mapped(number)

    def _node(self, number: int, body: AnyBody, items: list[dict[str, Any]]) -> str:
        node_id = f"cx-{number}"
        self._append(number, node_id, body)
        self.leaf = node_id
        self.history.extend((item, node_id) for item in items)
        return node_id

    def _keep(self, number: int, line: dict[str, Any]) -> None:
        kind = line.get("type")
        payload = line.get("payload")
        sub = payload.get("type") if isinstance(payload, dict) else None
        name = f"codex.{kind}" + (f".{sub}" if kind == "event_msg" and isinstance(sub, str) else "")
        node_id = f"cx-{number}"
        self.records.append(NewRecord(id=node_id, at=self.at, body=_custom(name, line, self.leaf)))
        self.leaf = node_id
        self.tally.kept(number)

    def _session_meta(self, number: int, payload: dict[str, Any]) -> None:
        session = payload.get("id")
        journal = stable_id(session) if isinstance(session, str) and session else "codex-session"
        meta: dict[str, Any] = {"codex": payload}
        if isinstance(payload.get("forked_from_id"), str):
            meta["forked_from"] = payload["forked_from_id"]
        self.header = NewRecord(
            id=journal, at=self.at, body=Header(journal=journal, creator="codex", metadata=meta)
        )
        self.tally.mapped(number)
        instructions = payload.get("base_instructions")
        text = instructions.get("text") if isinstance(instructions, dict) else instructions
        if isinstance(text, str):
            body = SystemMessage(
                parent=self.leaf,
                content=(TextBlock(text=text),),
                details={"codex": {"base_instructions": True}},
            )
            self._append(number, "cx-instructions", body)
            self.leaf = "cx-instructions"

    def _message(self, number: int, item: dict[str, Any]) -> None:
        role = item.get("role")
        content = _blocks(item.get("content"))
        details = {"codex": _rest(item, ("type", "content")) | {"content_types": _types(item)}}
        body: AnyBody
        if role == "user":
            body = UserMessage(parent=self.leaf, content=content, details=details)
        else:
            body = SystemMessage(parent=self.leaf, content=content, details=details)
        self._node(number, body, [item])

    def _tool_result(self, number: int, item: dict[str, Any]) -> None:
        call_id = str(item["call_id"])
        output = item.get("output")
        if isinstance(output, str | list):
            content = _blocks(output)
        else:
            content = (TextBlock(text=json.dumps(output, ensure_ascii=False)),)
        rest = _rest(item, ("call_id", "output")) | _output_form(output)
        body = ToolResult(
            parent=self.leaf,
            call_id=call_id,
            content=content,
            tool_name=self.calls.get(call_id),
            details={"codex": rest},
        )
        self._node(number, body, [item])

    def _close_turn(self) -> None:
        if not self.turn:
            return
        turn, self.turn = self.turn, []
        blocks: list[Block] = []
        items: list[dict[str, Any]] = []
        for _, item in turn:
            mapped, rest = _model_item(item)
            items.append(rest | {"blocks": len(mapped)})
            blocks.extend(mapped)
            if item.get("type") in CALL_ITEMS:
                self.calls[str(item.get("call_id"))] = str(item.get("name", item.get("type")))
        ends_with_call = turn[-1][1].get("type") in CALL_ITEMS
        stop = "tool_use" if ends_with_call else "end_turn"
        first = turn[0][0]
        self.inferred.append(f"line {first}: stop reason {stop!r} inferred from the turn's last item")
        body = AssistantMessage(
            parent=self.leaf,
            content=tuple(blocks),
            stop_reason=stop,
            model=self.model,
            details={"codex": {"items": items, "lines": [n for n, _ in turn], "stop_reason": "inferred"}},
        )
        self._node(first, body, [item for _, item in turn])
        for number, _ in turn[1:]:
            self.tally.mapped(number)
        deferred, self.deferred = self.deferred, []
        for number, line in deferred:
            self._other(number, line)

    def _compacted(self, number: int, line: dict[str, Any], payload: dict[str, Any]) -> None:
        replacement = _after_compaction([item for item, _ in self.history], payload)
        reset = Reset(reason="codex: compacted", actor="codex")
        self.records.append(NewRecord(id=f"cx-{number}-reset", at=self.at, body=reset))
        self.leaf = None
        self.history = []
        marker = f"cx-{number}"
        self.records.append(NewRecord(id=marker, at=self.at, body=_custom("codex.compacted", line, None)))
        self.leaf = marker
        self.tally.mapped(number)
        for index, item in enumerate(replacement):
            node_id = f"cx-{number}.{index}"
            self.records.append(NewRecord(id=node_id, at=self.at, body=_replacement_body(item, self.leaf)))
            self.leaf = node_id
            self.history.append((item, node_id))

    def _rollback(self, number: int, line: dict[str, Any]) -> None:
        payload = line["payload"]
        cut = _rollback_cut([item for item, _ in self.history], payload.get("num_turns", 0))
        target = self.history[cut - 1][1] if cut > 0 else None
        if cut < len(self.history):
            reason = f"codex: thread rolled back {payload.get('num_turns')} turn(s)"
            move = LeafMoved(from_leaf=self.leaf, to_leaf=target, reason=reason, actor="codex")
            self.records.append(NewRecord(id=f"cx-{number}-move", at=self.at, body=move))
            self.leaf = target
            del self.history[cut:]
        self._keep(number, line)
        self.tally.mapped(number)  # the line was kept, and the move it caused was mapped


def _is_rollback(kind: Any, payload: Any) -> bool:
    return kind == "event_msg" and isinstance(payload, dict) and payload.get("type") == "thread_rolled_back"


def _custom(name: str, data: Any, parent: str | None) -> CustomEntry:
    return CustomEntry(parent=parent, type=name, data=data)


def _replacement_body(item: dict[str, Any], parent: str | None) -> AnyBody:
    kind, role = item.get("type"), item.get("role")
    if kind == "message" and role in ("user", "developer", "system"):
        details = {"codex": _rest(item, ("type", "content")) | {"content_types": _types(item)}}
        content = _blocks(item.get("content"))
        if role == "user":
            return UserMessage(parent=parent, content=content, details=details)
        return SystemMessage(parent=parent, content=content, details=details)
    if kind in MODEL_ITEMS or kind == "message":
        blocks, rest = _model_item(item)
        details = {"codex": {"items": [rest | {"blocks": len(blocks)}], "stop_reason": "inferred"}}
        stop = "tool_use" if kind in CALL_ITEMS else "end_turn"
        return AssistantMessage(parent=parent, content=tuple(blocks), stop_reason=stop, details=details)
    if kind in OUTPUT_ITEMS:
        output = item.get("output")
        content = _blocks(output) if isinstance(output, str | list) else (TextBlock(text=json.dumps(output)),)
        rest = _rest(item, ("call_id", "output")) | _output_form(output)
        return ToolResult(
            parent=parent, call_id=str(item["call_id"]), content=content, details={"codex": rest}
        )
    return _custom(f"codex.item.{kind}", item, parent)


def _model_item(item: dict[str, Any]) -> tuple[list[Block], dict[str, Any]]:
    """The blocks a model output item maps to, and the item's fields that no block holds."""
    kind = item.get("type")
    if kind == "reasoning":
        parts = [p for p in item.get("summary") or [] if isinstance(p, dict)]
        texts = [str(p.get("text", "")) for p in parts]
        thinking = ThinkingBlock(
            thinking="\n\n".join(texts), signature=item.get("encrypted_content"), redacted=not texts
        )
        rest = _rest(item, ("encrypted_content", "summary")) | {
            "summary": [{k: v for k, v in p.items() if k != "text"} for p in parts],
            "summary_lengths": [len(t) for t in texts],
        }
        return [thinking], rest
    if kind == "message":
        rest = _rest(item, ("content",)) | {"content_types": _types(item)}
        return list(_blocks(item.get("content"))), rest
    if kind == "function_call":
        raw = item.get("arguments")
        arguments = _json_object(raw)
        rest = _rest(item, ("call_id", "name", "arguments"))
        if arguments is None or _arguments_text(arguments) != raw:
            rest["arguments"] = raw  # the exact text, where the block's sorted keys would not give it back
        block = ToolCallBlock(call_id=str(item["call_id"]), name=str(item["name"]), arguments=arguments or {})
        return [block], rest
    if kind == "custom_tool_call":
        block = ToolCallBlock(
            call_id=str(item["call_id"]), name=str(item["name"]), arguments={"input": item.get("input")}
        )
        return [block], _rest(item, ("call_id", "name", "input"))
    return [], dict(item)  # web search, image generation, ...: no waybook block; kept whole


def _json_object(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _arguments_text(arguments: dict[str, Any]) -> str:
    """How Codex writes call arguments, with keys sorted as the record's canonical form keeps them."""
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)


def _blocks(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (TextBlock(text=content),)
    blocks: list[Block] = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
        elif isinstance(part, dict) and isinstance(part.get("image_url"), str):
            blocks.append(ImageBlock(source=part["image_url"], media_type=_media_type(part["image_url"])))
        else:
            blocks.append(TextBlock(text=json.dumps(part, ensure_ascii=False)))
    return tuple(blocks)


def _media_type(url: str) -> str:
    if url.startswith("data:") and ";" in url:
        return url[5 : url.index(";")]
    return "application/octet-stream"


def _types(item: dict[str, Any]) -> list[Any]:
    content = item.get("content")
    if isinstance(content, list):
        return [part.get("type") if isinstance(part, dict) else None for part in content]
    return []


def _output_form(output: Any) -> dict[str, Any]:
    if isinstance(output, str):
        return {"output_form": "text"}
    if isinstance(output, list):
        return {"output_form": "parts", "content_types": _types({"content": output})}
    return {"output_form": "json"}


def _rest(item: dict[str, Any], mapped: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in mapped}


# --- back: the items Codex would be sent for a waybook context ---------------------------------------


def context_items(messages: Any) -> list[dict[str, Any]]:
    """The Codex response items for waybook context messages of an imported rollout, in order.

    The inverse of the mapping above; `messages` is what `waybook.projections.context_at` returns. The
    base instructions (sent by Codex as `instructions`, not as an item) are left out.
    """
    items: list[dict[str, Any]] = []
    for message in messages:
        body = message.record.body
        details = (getattr(body, "details", None) or {}).get("codex", {})
        if isinstance(body, AssistantMessage):
            items.extend(_items_of_turn(list(body.content), details.get("items", [])))
        elif isinstance(body, ToolResult):
            items.append(_item_of_result(body, details))
        elif isinstance(body, UserMessage | SystemMessage) and not details.get("base_instructions"):
            rest = {k: v for k, v in details.items() if k != "content_types"}
            items.append({"type": "message", **rest, "content": _parts(body.content, details)})
    return items


def _items_of_turn(blocks: list[Block], described: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = []
    for item in described:
        rest = {k: v for k, v in item.items() if k not in ("blocks", "content_types")}
        mine, blocks = blocks[: item["blocks"]], blocks[item["blocks"] :]
        kind = item.get("type")
        if kind == "reasoning":
            block = mine[0]
            assert isinstance(block, ThinkingBlock)
            rest.pop("summary_lengths", None)
            rest["summary"] = [
                {**part, "text": text}
                for part, text in zip(
                    rest["summary"], _split(block.thinking, item["summary_lengths"]), strict=True
                )
            ]
            items.append({**rest, "encrypted_content": block.signature})
        elif kind == "message":
            items.append({**rest, "content": _parts(tuple(mine), item)})
        elif kind == "function_call":
            call = mine[0]
            assert isinstance(call, ToolCallBlock)
            arguments = rest.pop("arguments", None)
            if arguments is None:
                arguments = _arguments_text(call.arguments)
            items.append({**rest, "name": call.name, "arguments": arguments, "call_id": call.call_id})
        elif kind == "custom_tool_call":
            call = mine[0]
            assert isinstance(call, ToolCallBlock)
            items.append(
                {**rest, "call_id": call.call_id, "name": call.name, "input": call.arguments["input"]}
            )
        else:
            items.append(rest)
    return items


def _split(text: str, lengths: list[int]) -> list[str]:
    texts, start = [], 0
    for length in lengths:
        texts.append(text[start : start + length])
        start += length + 2  # the "\n\n" that joined them
    return texts


def _item_of_result(body: ToolResult, details: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in details.items() if k not in ("output_form", "content_types")}
    form = details.get("output_form")
    output: Any
    if form == "text":
        output = "".join(b.text for b in body.content if isinstance(b, TextBlock))
    elif form == "parts":
        output = _parts(body.content, details)
    else:
        output = json.loads("".join(b.text for b in body.content if isinstance(b, TextBlock)))
    return {**rest, "call_id": body.call_id, "output": output}


def _parts(content: tuple[Block, ...], details: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block, kind in zip(content, details.get("content_types", []), strict=False):
        if isinstance(block, ImageBlock):
            parts.append({"type": kind, "image_url": block.source})
        elif isinstance(block, TextBlock) and kind in ("input_text", "output_text"):
            parts.append({"type": kind, "text": block.text})
        elif isinstance(block, TextBlock):
            parts.append(json.loads(block.text))
    return parts
