"""The Pi coding agent's session JSONL, imported to and exported from waybook records.

Pi writes a header line (`type: "session"`) and then entries. Version 1 entries have no ids: each one
continues the one before, and a compaction names its first kept entry by index. Version 2 gives every
entry an `id` and a `parentId`; version 3 renames the `hookMessage` role to `custom`. Import migrates to
version-3 meaning first, then maps each entry to a record:

| Pi entry | waybook record |
|---|---|
| `message` user, assistant, toolResult | the same messages (Pi-only fields in `details["pi"]`) |
| `message` bashExecution, custom | CustomEntry `pi.message.<role>`, shown in context |
| `compaction` | Compaction |
| `branch_summary`, `custom_message` | CustomEntry `pi.<type>`, shown in context |
| `model_change`, `thinking_level_change`, `custom`, `label`, ... | CustomEntry `pi.<type>` |
| `custom` with customType `waybook.record` | the waybook record it wraps (export's form for others) |

Pi keeps its leaf in memory (on reload, the last entry), so it records no leaf moves. Import makes them
explicit: wherever an entry's parent is not the entry before it, a LeafMoved record is inserted.
Ids are deterministic (Pi's own ids; `l<line>` for version-1 entries; `move:<entry id>` for inferred
moves), so importing the same file twice, or a file exported from an import, gives the same records.

Lines that do not parse are refused with their line numbers; `lenient=True` skips them and counts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from waybook.codecs.canonical import canonical_json
from waybook.codecs.wire import decode_body
from waybook.journal.errors import DecodeError
from waybook.journal.records import (
    AnyBody,
    AssistantMessage,
    Block,
    Compaction,
    Content,
    CustomEntry,
    Header,
    ImageBlock,
    LeafMoved,
    NewRecord,
    Record,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.journal.rules import ID_PATTERN, TIMESTAMP_PATTERN

PI_VERSION: Final = 3
WRAPPED: Final = "waybook.record"
"""customType of the Pi `custom` entries that carry a waybook record Pi has no entry type for."""

_STOP_FROM_PI: Final = {
    "stop": "end_turn",
    "length": "max_tokens",
    "toolUse": "tool_use",
    "error": "error",
    "aborted": "aborted",
}
_STOP_TO_PI: Final = {v: k for k, v in _STOP_FROM_PI.items()} | {
    "stop_sequence": "stop",
    "refusal": "stop",
    "pause_turn": "stop",
}
_ENTRY_KEYS: Final = ("type", "id", "parentId", "timestamp")


class PiFormatError(DecodeError):
    """A Pi session file that cannot be imported; `problems` lists (line number, reason)."""

    def __init__(self, problems: list[tuple[int, str]]) -> None:
        self.problems = problems
        shown = "; ".join(f"line {n}: {why}" for n, why in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(
            f"{len(problems)} line(s) cannot be imported: {shown}{more}. Fix them, or import with "
            "--lenient to skip unparseable lines",
            where="pi session",
        )


@attrs.frozen
class PiImport:
    """The records of an imported Pi session, the version it was written in, and the lines skipped."""

    records: tuple[NewRecord, ...]
    version: int
    skipped: tuple[tuple[int, str], ...]


# --- import ---------------------------------------------------------------------------------------


def import_pi(data: bytes | str, *, lenient: bool = False) -> PiImport:
    """Parse, migrate and map a Pi session file's content to records (a new journal's first records)."""
    entries, skipped = _parse(data, lenient=lenient)
    if not entries or entries[0][1].get("type") != "session":
        raise PiFormatError([(entries[0][0] if entries else 1, "the first line is not a Pi session header")])
    header_line, header = entries[0]
    version = header.get("version", 1)
    if not isinstance(version, int) or not 1 <= version <= PI_VERSION:
        raise PiFormatError([(header_line, f"unknown Pi session version {version!r}")])
    body_entries = _migrate(entries[1:], version)
    problems: list[tuple[int, str]] = []
    records = [_header_record(header, header_line, problems)]
    leaf: str | None = None
    for line, entry in body_entries:
        try:
            at = _timestamp(entry.get("timestamp"))
            parent = entry.get("parentId")
            if parent != leaf:
                move = LeafMoved(
                    from_leaf=leaf, to_leaf=parent, reason="pi: continues an earlier entry", actor="pi"
                )
                records.append(NewRecord(id=f"move:{entry['id']}", at=at, body=move))
            records.append(NewRecord(id=_id(entry["id"]), at=at, body=_body(entry, parent)))
            leaf = entry["id"]
        except (KeyError, TypeError, ValueError, DecodeError) as exc:
            problems.append((line, _why(exc)))
    if problems:
        raise PiFormatError(problems)
    return PiImport(records=tuple(records), version=version, skipped=tuple(skipped))


def _parse(
    data: bytes | str, *, lenient: bool
) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, str]]]:
    text = data.decode("utf-8", errors="strict") if isinstance(data, bytes) else data
    entries: list[tuple[int, dict[str, Any]]] = []
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            bad.append((number, f"not JSON ({exc.msg})"))
            continue
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            bad.append((number, "not a Pi entry (an object with a type)"))
            continue
        entries.append((number, value))
    if bad and not lenient:
        raise PiFormatError(bad)
    return entries, bad


def _migrate(entries: list[tuple[int, dict[str, Any]]], version: int) -> list[tuple[int, dict[str, Any]]]:
    """Bring entries to version-3 meaning, without mutating the input."""
    out = [(line, dict(entry)) for line, entry in entries]
    if version < 2:
        # Version 1: ids follow the line; each entry continues the previous one; a compaction's
        # firstKeptEntryIndex counts the parsed entries with the header as entry 0.
        by_index = {i + 1: f"l{line}" for i, (line, _) in enumerate(out)}
        previous = None
        for line, entry in out:
            entry["id"] = f"l{line}"
            entry["parentId"] = previous
            previous = entry["id"]
            if entry.get("type") == "compaction" and isinstance(entry.get("firstKeptEntryIndex"), int):
                entry["firstKeptEntryId"] = by_index.get(entry.pop("firstKeptEntryIndex"))
    if version < 3:
        for _, entry in out:
            message = entry.get("message")
            if (
                entry.get("type") == "message"
                and isinstance(message, dict)
                and message.get("role") == "hookMessage"
            ):
                entry["message"] = {**message, "role": "custom"}
    return out


def _header_record(header: dict[str, Any], line: int, problems: list[tuple[int, str]]) -> NewRecord:
    extra = {k: v for k, v in header.items() if k not in ("type", "id", "version", "timestamp")}
    session_id = header.get("id")
    if not isinstance(session_id, str) or not ID_PATTERN.fullmatch(session_id):
        problems.append((line, f"session id {session_id!r} is not usable as a record id"))
        session_id = "pi-session"
    at = _timestamp(header.get("timestamp"))
    body = Header(journal=session_id, creator="pi", metadata={"pi": extra})
    return NewRecord(id=session_id, at=at, body=body)


def _body(entry: dict[str, Any], parent: str | None) -> AnyBody:
    kind = entry["type"]
    rest = {k: v for k, v in entry.items() if k not in _ENTRY_KEYS}
    if kind == "message":
        return _message_body(rest["message"], parent)
    if kind == "compaction":
        details: dict[str, Any] = {k: rest[k] for k in ("details", "fromHook") if k in rest}
        tokens = rest.get("tokensBefore")
        return Compaction(
            parent=parent,
            summary=rest["summary"],
            first_kept=rest.get("firstKeptEntryId"),
            tokens_before=tokens if isinstance(tokens, int) else None,
            details=details or None,
        )
    if kind == "custom" and rest.get("customType") == WRAPPED:
        return _unwrap(rest.get("data"), parent)
    if kind == "branch_summary":
        return CustomEntry(
            parent=parent,
            type="pi.branch_summary",
            data=rest,
            in_context=True,
            content=_text(rest["summary"]),
        )
    if kind == "custom_message":
        data = {k: v for k, v in rest.items() if k != "content"}
        return CustomEntry(
            parent=parent,
            type="pi.custom_message",
            data=data,
            in_context=True,
            content=_content(rest["content"]),
        )
    return CustomEntry(parent=parent, type=f"pi.{kind}", data=rest)


def _message_body(message: dict[str, Any], parent: str | None) -> AnyBody:
    role = message["role"]
    rest = {k: v for k, v in message.items() if k not in ("role", "content", "model", "stopReason")}
    if role == "user":
        fields = {k: v for k, v in message.items() if k not in ("role", "content")}
        return UserMessage(parent=parent, content=_content(message["content"]), details=_pi(fields))
    if role == "assistant":
        stop = message.get("stopReason")
        if stop not in _STOP_FROM_PI:
            msg = f"unknown assistant stopReason {stop!r}"
            raise ValueError(msg)
        usage = message.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        ints = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
        return AssistantMessage(
            parent=parent,
            content=_content(message["content"]),
            stop_reason=_STOP_FROM_PI[stop],
            model=message.get("model"),
            usage=ints or None,
            details=_pi(rest),
        )
    if role == "toolResult":
        fields = {
            k: v
            for k, v in message.items()
            if k not in ("role", "content", "toolCallId", "toolName", "isError")
        }
        return ToolResult(
            parent=parent,
            call_id=message["toolCallId"],
            tool_name=message.get("toolName"),
            content=_content(message["content"]),
            is_error=bool(message.get("isError", False)),
            details=_pi(fields),
        )
    if role == "bashExecution":
        shown = _text(f"Ran `{message.get('command', '')}`\n{message.get('output', '')}")
        return CustomEntry(
            parent=parent, type="pi.message.bashExecution", data=message, in_context=True, content=shown
        )
    if role == "custom":
        data = {k: v for k, v in message.items() if k != "content"}
        return CustomEntry(
            parent=parent,
            type="pi.message.custom",
            data=data,
            in_context=bool(message.get("display", True)),
            content=_content(message.get("content", "")),
        )
    return CustomEntry(parent=parent, type=f"pi.message.{role}", data=message)


def _unwrap(data: Any, parent: str | None) -> AnyBody:
    if not isinstance(data, dict):
        msg = f"a {WRAPPED} entry must carry a record body object"
        raise TypeError(msg)
    body = decode_body(canonical_json({**data, "parent": parent}), where=f"a Pi {WRAPPED} entry")
    if not body.IS_NODE:
        msg = f"a {WRAPPED} entry must carry a node"
        raise ValueError(msg)
    return body


def _content(value: Any) -> Content:
    if isinstance(value, str):
        return _text(value)
    blocks: list[Block] = []
    for block in value:
        kind = block.get("type")
        if kind == "text":
            blocks.append(TextBlock(text=block["text"]))
        elif kind == "thinking":
            blocks.append(
                ThinkingBlock(
                    thinking=block["thinking"],
                    signature=block.get("thinkingSignature"),
                    redacted=bool(block.get("redacted", False)),
                )
            )
        elif kind == "toolCall":
            blocks.append(
                ToolCallBlock(call_id=block["id"], name=block["name"], arguments=block.get("arguments") or {})
            )
        elif kind == "image":
            mime = block["mimeType"]
            blocks.append(ImageBlock(source=f"data:{mime};base64,{block['data']}", media_type=mime))
        else:
            msg = f"unknown content block type {kind!r}"
            raise ValueError(msg)
    return tuple(blocks)


def _text(value: str) -> Content:
    return (TextBlock(text=value),)


def _pi(fields: dict[str, Any]) -> dict[str, Any] | None:
    return {"pi": fields} if fields else None


def _id(value: Any) -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        msg = f"entry id {value!r} is not usable as a record id"
        raise ValueError(msg)
    return value


def _timestamp(value: Any) -> str:
    if isinstance(value, str) and TIMESTAMP_PATTERN.fullmatch(value):
        return value
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    elif isinstance(value, int | float):
        parsed = datetime.fromtimestamp(value / 1000, UTC)
    else:
        msg = f"timestamp {value!r} is not a date"
        raise TypeError(msg)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _why(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return str(exc)


# --- export ---------------------------------------------------------------------------------------


def export_pi(records: Iterable[Record]) -> Iterator[bytes]:
    """Pi version-3 session lines (without newlines) for a journal's records, in order.

    Leaf moves and resets are left out: Pi derives its tree from each entry's parentId. Records Pi has
    no entry type for are wrapped in a Pi `custom` entry (customType `waybook.record`), which Pi keeps
    and ignores and which import unwraps.
    """
    for record in records:
        body = record.body
        if isinstance(body, Header):
            yield _json(_export_header(record, body))
        elif body.IS_NODE:
            entry = {"type": "", "id": record.id, "parentId": body.parent, "timestamp": record.at}  # type: ignore[union-attr]
            entry.update(_export_node(body))
            yield _json(entry)


def _export_header(record: Record, body: Header) -> dict[str, Any]:
    extra = body.metadata.get("pi", {}) if isinstance(body.metadata.get("pi"), dict) else {}
    header: dict[str, Any] = {
        "type": "session",
        "version": PI_VERSION,
        "id": body.journal,
        "timestamp": record.at,
    }
    header["cwd"] = extra.get("cwd", body.metadata.get("cwd", ""))
    header.update({k: v for k, v in extra.items() if k != "cwd"})
    return header


def _export_node(body: AnyBody) -> dict[str, Any]:
    if isinstance(body, UserMessage):
        return {
            "type": "message",
            "message": {"role": "user", "content": _blocks(body.content), **_extra(body.details)},
        }
    if isinstance(body, AssistantMessage):
        extra = _extra(body.details)
        message: dict[str, Any] = {"role": "assistant", "content": _blocks(body.content)}
        message.update(
            {
                "model": body.model,
                "usage": body.usage or {},
                "stopReason": _STOP_TO_PI.get(body.stop_reason or "", "stop"),
            }
        )
        message.update(extra)
        return {"type": "message", "message": message}
    if isinstance(body, ToolResult):
        message = {
            "role": "toolResult",
            "toolCallId": body.call_id,
            "toolName": body.tool_name,
            "content": _blocks(body.content),
            "isError": body.is_error,
            **_extra(body.details),
        }
        return {"type": "message", "message": message}
    if isinstance(body, Compaction):
        entry = {
            "type": "compaction",
            "summary": body.summary,
            "firstKeptEntryId": body.first_kept,
            "tokensBefore": body.tokens_before or 0,
        }
        entry.update(body.details or {})
        return entry
    if isinstance(body, CustomEntry) and body.type.startswith("pi.message."):
        message = dict(body.data) if isinstance(body.data, dict) else {}
        if body.type == "pi.message.custom":
            message["content"] = _blocks(body.content)
        return {"type": "message", "message": message}
    if isinstance(body, CustomEntry) and body.type == "pi.custom_message":
        return {"type": "custom_message", **(body.data or {}), "content": _blocks(body.content)}
    if isinstance(body, CustomEntry) and body.type.startswith("pi.") and isinstance(body.data, dict):
        return {"type": body.type.removeprefix("pi."), **body.data}
    wire = json.loads(canonical_json(body))
    wire.pop("parent", None)
    return {"type": "custom", "customType": WRAPPED, "data": wire}


def _extra(details: dict[str, Any] | None) -> dict[str, Any]:
    pi = (details or {}).get("pi")
    return dict(pi) if isinstance(pi, dict) else {}


def _blocks(content: Content) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            thinking: dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
            if block.signature is not None:
                thinking["thinkingSignature"] = block.signature
            if block.redacted:
                thinking["redacted"] = True
            out.append(thinking)
        elif isinstance(block, ToolCallBlock):
            out.append(
                {"type": "toolCall", "id": block.call_id, "name": block.name, "arguments": block.arguments}
            )
        elif isinstance(block, ImageBlock):
            prefix = f"data:{block.media_type};base64,"
            data = block.source.removeprefix(prefix) if block.source.startswith(prefix) else block.source
            out.append({"type": "image", "data": data, "mimeType": block.media_type})
    return out


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
