"""An OpenCode session's messages and parts as waybook records, following OpenCode's own rules for
what the model sees (`toModelMessages` in packages/opencode/src/session/message-v2.ts).

- A user message: its `text` parts (not `ignored`), `file` parts (an image as an image, other files as
  `[Attached MIME: NAME]`), a `compaction` part as "What did we do so far?" and a `subtask` part as "The
  following tool was executed by the user", as OpenCode sends them: a UserMessage.
- An assistant message: `text`, `reasoning` and `tool` parts as text, thinking and tool calls (model,
  tokens as usage, finish as stop reason), then one ToolResult per `tool` part from its state:
  `completed` its output ("[Old tool result content cleared]" once compacted), `error` its error,
  `pending` / `running` "[Tool execution was interrupted]".
- An assistant message with an error (other than an abort after output), which OpenCode leaves out of
  the context, and a user message with nothing to send: a CustomEntry `opencode.message` out of it.
- `step-start`, `step-finish`, `snapshot`, `patch`, `agent`, `retry` parts and unknown ones: kept verbatim
  in the message's `details["opencode"]`.

Every message and part is counted once in the report (mapped or kept verbatim). Ids are `oc-<id>`.
Decoding is by an allow-list of part types; anything else is kept verbatim, never interpreted.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import attrs

from waybook.formats._foreign import ImportReport, stable_id
from waybook.formats.opencode._storage import SOURCE, Stored
from waybook.model._records import (
    AssistantMessage,
    Block,
    CustomEntry,
    Header,
    ImageBlock,
    NewRecord,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

COMPACTION_PROMPT: Final = "What did we do so far?"
SUBTASK_PROMPT: Final = "The following tool was executed by the user"
CLEARED: Final = "[Old tool result content cleared]"
INTERRUPTED: Final = "[Tool execution was interrupted]"
STOPS: Final = {"stop": "end_turn", "tool-calls": "tool_use", "length": "max_tokens", "error": "error"}
KEPT_PARTS: Final = frozenset({"step-start", "step-finish", "snapshot", "patch", "agent", "retry"})


@attrs.frozen
class OpenCodeImport:
    records: tuple[NewRecord, ...]
    report: ImportReport
    journal: str


def _at(value: Any, fallback: str) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e14:
        moment = datetime.fromtimestamp(value / 1000, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return fallback


def import_opencode(stored: Stored) -> OpenCodeImport:
    session = stored.session
    journal = stable_id("oc", str(session.get("id", "session")))
    time = session.get("time")
    created = _at(time.get("created") if isinstance(time, dict) else session.get("time_created"), "")
    first = stored.messages[0][0].get("time", {}) if stored.messages else {}
    start = created or _at(
        first.get("created") if isinstance(first, dict) else None, "1970-01-01T00:00:00.000Z"
    )
    meta = {
        k: session[k]
        for k in ("id", "title", "directory", "projectID", "parentID", "version")
        if k in session
    }
    records = [
        NewRecord(id=journal, at=start, body=Header(journal=journal, creator=SOURCE, metadata={SOURCE: meta}))
    ]
    builder = _Builder(records, start)
    for info, parts in stored.messages:
        builder.message(info, parts)
    lines = len(stored.messages) + sum(len(parts) for _, parts in stored.messages)
    report = ImportReport(SOURCE, lines, builder.mapped, lines - builder.mapped, (), tuple(builder.inferred))
    return OpenCodeImport(records=tuple(records), report=report, journal=journal)


class _Builder:
    def __init__(self, records: list[NewRecord], start: str) -> None:
        self.records = records
        self.leaf: str | None = None
        self.at = start
        self.mapped = 0
        self.inferred: list[str] = []

    def _append(self, record_id: str, body: Any) -> None:
        self.records.append(NewRecord(id=record_id, at=self.at, body=body))
        self.leaf = record_id

    def message(self, info: dict[str, Any], parts: Sequence[dict[str, Any]]) -> None:
        time = info.get("time")
        self.at = max(self.at, _at(time.get("created") if isinstance(time, dict) else None, self.at))
        node_id = stable_id("oc", str(info.get("id")))
        kept = [p for p in parts if p.get("type") in KEPT_PARTS or p.get("type") not in _USED]
        details = {SOURCE: {"info": info, "parts": kept}} if kept or info else None
        role = info.get("role")
        if role == "user":
            content = self._user_content(parts)
            if content:
                self._append(node_id, UserMessage(parent=self.leaf, content=tuple(content), details=details))
                self.mapped += 1
                return
        elif role == "assistant" and parts and not _skipped(info, parts):
            self._assistant(node_id, info, parts, details)
            return
        self._append(
            node_id,
            CustomEntry(parent=self.leaf, type="opencode.message", data={"info": info, "parts": list(parts)}),
        )

    def _user_content(self, parts: Sequence[dict[str, Any]]) -> list[Block]:
        content: list[Block] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text" and not part.get("ignored") and isinstance(part.get("text"), str):
                content.append(TextBlock(text=part["text"]))
            elif kind == "file" and part.get("mime") not in ("text/plain", "application/x-directory"):
                url, mime = part.get("url"), part.get("mime")
                if isinstance(url, str) and isinstance(mime, str) and url.startswith("data:image/"):
                    content.append(ImageBlock(source=url, media_type=mime))
                else:
                    content.append(TextBlock(text=f"[Attached {mime}: {part.get('filename') or 'file'}]"))
            elif kind == "compaction":
                content.append(TextBlock(text=COMPACTION_PROMPT))
            elif kind == "subtask":
                content.append(TextBlock(text=SUBTASK_PROMPT))
            else:
                continue
            self.mapped += 1
        return content

    def _assistant(
        self,
        node_id: str,
        info: dict[str, Any],
        parts: Sequence[dict[str, Any]],
        details: dict[str, Any] | None,
    ) -> None:
        content: list[Block] = []
        results: list[tuple[str, ToolResult]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                content.append(TextBlock(text=part["text"]))
            elif kind == "reasoning" and isinstance(part.get("text"), str):
                content.append(ThinkingBlock(thinking=part["text"]))
            elif (
                kind == "tool" and isinstance(part.get("state"), dict) and isinstance(part.get("callID"), str)
            ):
                state = part["state"]
                arguments = state.get("input") if isinstance(state.get("input"), dict) else {}
                name = str(part.get("tool"))
                content.append(ToolCallBlock(call_id=part["callID"], name=name, arguments=arguments))
                text, error = _outcome(state)
                result = ToolResult(
                    parent=node_id,
                    call_id=part["callID"],
                    tool_name=name,
                    content=(TextBlock(text=text),),
                    is_error=error,
                )
                results.append((stable_id("oc", str(part.get("id"))), result))
            else:
                continue
            self.mapped += 1
        tokens = info.get("tokens")
        usage = None
        if isinstance(tokens, dict):
            cache: dict[str, Any] = tokens["cache"] if isinstance(tokens.get("cache"), dict) else {}
            found = {
                "input_tokens": tokens.get("input"),
                "output_tokens": tokens.get("output"),
                "reasoning_tokens": tokens.get("reasoning"),
                "cache_read_input_tokens": cache.get("read"),
                "cache_creation_input_tokens": cache.get("write"),
            }
            usage = {
                k: int(v) for k, v in found.items() if type(v) is int or (type(v) is float and v.is_integer())
            }
        failure = info.get("error")
        stop = "aborted" if isinstance(failure, dict) else STOPS.get(str(info.get("finish")), None)
        if stop is None and results:
            stop = "tool_use"
        model = info.get("modelID") if isinstance(info.get("modelID"), str) else None
        body = AssistantMessage(
            parent=self.leaf,
            content=tuple(content),
            stop_reason=stop,
            model=model,
            usage=usage or None,
            details=details,
        )
        self._append(node_id, body)
        self.mapped += 1
        for result_id, result in results:
            self._append(result_id, attrs_replace_parent(result, self.leaf))


_USED: Final = frozenset({"text", "reasoning", "tool", "file", "compaction", "subtask"})


def attrs_replace_parent(result: ToolResult, parent: str | None) -> ToolResult:
    import msgspec

    return msgspec.structs.replace(result, parent=parent)


def _outcome(state: dict[str, Any]) -> tuple[str, bool]:
    status = state.get("status")
    if status == "completed":
        time: dict[str, Any] = state["time"] if isinstance(state.get("time"), dict) else {}
        if time.get("compacted"):
            return CLEARED, False
        return str(state.get("output", "")), False
    if status == "error":
        metadata: dict[str, Any] = state["metadata"] if isinstance(state.get("metadata"), dict) else {}
        if metadata.get("interrupted") is True and isinstance(metadata.get("output"), str):
            return str(metadata["output"]), False
        return str(state.get("error", "")), True
    return INTERRUPTED, True


def _skipped(info: dict[str, Any], parts: Sequence[dict[str, Any]]) -> bool:
    """OpenCode leaves an errored assistant message out of the context, unless it was aborted after
    producing something other than step starts and reasoning."""
    error = info.get("error")
    if not error:
        return False
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return not (aborted and any(p.get("type") not in ("step-start", "reasoning") for p in parts))
