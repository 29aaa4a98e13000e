"""An OpenCode session's messages and parts as waybook records, following OpenCode's own rules for
what the model sees (`toModelMessages(filterCompacted(...))` in packages/opencode/src/session/message-v2.ts).

- A user message: its `text` parts (not `ignored`), `file` parts (an image as an image, other files as
  `[Attached MIME: NAME]`), a `compaction` part as "What did we do so far?" and a `subtask` part as "The
  following tool was executed by the user", as OpenCode sends them: a UserMessage.
- An assistant message: `text`, `reasoning` and `tool` parts as text, thinking and tool calls (model,
  tokens as usage, finish as stop reason), then one ToolResult per `tool` part from its state:
  `completed` its output ("[Old tool result content cleared]" once compacted), `error` its error,
  `pending` / `running` "[Tool execution was interrupted]".
- An assistant message with an error (other than an abort after output), or made of step starts alone,
  which OpenCode leaves out of the context, and a user message with nothing to send: a CustomEntry
  `opencode.message` out of it.
- `step-start`, `step-finish`, `snapshot`, `patch`, `agent`, `retry` parts and unknown ones: kept verbatim
  in the message's `details["opencode"]`.
- OpenCode's compaction filter (`_compaction.shapes`): each compaction's message and summary kept
  verbatim (`opencode.compaction`, `opencode.summary`) with a waybook Compaction after them standing for
  the pair, so the context at the session's leaf (and after each compaction) is what OpenCode sends;
  every message stays.
- A sub-agent session (one whose `parentID` names this one): a journal `<name>.agent-<session id>` of its
  own, linked (`SubagentLink`) from the task tool call whose metadata names it.

Every message and part is counted once in the report (mapped or kept verbatim; skipped: an unreadable
file under --lenient). Ids are `oc:<id>`. Decoding is by an allow-list of part types; anything else is
kept verbatim, never interpreted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import attrs
import msgspec

from waybook.formats._foreign import ImportReport, stable_id
from waybook.formats.opencode._compaction import Message, Summarized, shapes
from waybook.formats.opencode._storage import SOURCE, OpenCodeStorageError, Stored
from waybook.model import (
    AssistantMessage,
    Block,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    ImageBlock,
    NewRecord,
    SubagentLink,
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
    subagents: tuple[OpenCodeImport, ...] = ()
    """The journals of the sessions this one's task tool started (and theirs), in order."""


def _at(value: Any, fallback: str) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e14:
        moment = datetime.fromtimestamp(value / 1000, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return fallback


def subagent_journal(name: str, session_id: str) -> str:
    """The journal id of the sub-agent session `session_id` of an import named `name`."""
    return stable_id(f"{name}.agent-{session_id}")


def import_opencode(stored: Stored, *, name: str | None = None, journal: str | None = None) -> OpenCodeImport:
    """The session's records (its journal `journal`, default `oc:<session id>`: an import into a store
    names the id it is stored under), and a journal per sub-agent session, `<name>.agent-<session id>`
    (`name`: the import's output name; default the session's journal id), each linked from the task tool
    call that started it."""
    journal = journal or stable_id("oc", stored.id)
    imported = _session(stored, journal, name or journal, stored.skipped)
    names = Counter([imported.journal, *(sub.journal for sub in imported.subagents)])
    twice = sorted(n for n, count in names.items() if count > 1)
    if twice:
        why = f"two sessions would both be journal {twice[0]!r} (their ids differ only in unsafe characters)"
        raise OpenCodeStorageError(stored.id, why)
    return imported


def _session(stored: Stored, journal: str, name: str, skipped: tuple[tuple[int, str], ...]) -> OpenCodeImport:
    session = stored.session
    time = session.get("time")
    created = _at(time.get("created") if isinstance(time, dict) else session.get("time_created"), "")
    first = stored.messages[0][0].get("time", {}) if stored.messages else {}
    start = created or _at(
        first.get("created") if isinstance(first, dict) else None, "1970-01-01T00:00:00.000Z"
    )
    meta = {
        k: session[k]
        for k in ("id", "title", "directory", "projectID", "parentID", "parent_id", "version")
        if k in session
    }
    records = [
        NewRecord(id=journal, at=start, body=Header(journal=journal, creator=SOURCE, metadata={SOURCE: meta}))
    ]
    builder = _Builder(records, start)
    links = _links(stored, name, builder.inferred)
    compactions, cut = shapes(stored.messages)
    pairs = {p.compaction: "compaction" for p in compactions} | {p.summary: "summary" for p in compactions}
    after = {p.summary: p for p in compactions}
    nodes: list[list[tuple[str, bool]]] = []
    for position, (info, parts) in enumerate(stored.messages):
        if cut is not None and position == cut.start:
            builder.exclude(
                [n for made in nodes for n, shown in made if shown], "before the compacted context"
            )
        if position in pairs:
            nodes.append(builder.pair(info, parts, pairs[position]))
        else:
            nodes.append(builder.message(info, parts))
        if position in after:
            builder.compaction(stored.messages, nodes, after[position])
        for ordinal, (call_id, child, agent) in enumerate(links.get(position, ())):
            node = nodes[-1][0][0]
            if call_id is None:
                reason = (
                    f"opencode: session {child.id} names this one its parent; linked at the message before "
                    "it (inferred)"
                )
            else:
                reason = f"opencode: the task tool call started session {child.id}" + (
                    f" ({agent} agent)" if agent else ""
                )
            link = SubagentLink(
                node=node,
                journal=subagent_journal(name, child.id),
                call_id=call_id,
                agent=agent,
                reason=reason,
            )
            link_id = stable_id(node, "agent", str(ordinal), child.id)
            builder.records.append(NewRecord(id=link_id, at=builder.at, body=link))
    lines = len(stored.messages) + sum(len(parts) for _, parts in stored.messages) + len(skipped)
    kept = lines - builder.mapped - len(skipped)
    report = ImportReport(SOURCE, lines, builder.mapped, kept, skipped, tuple(builder.inferred))
    subagents = []
    for child in stored.children:
        sub = _session(child, subagent_journal(name, child.id), name, ())
        subagents.extend([attrs.evolve(sub, subagents=()), *sub.subagents])
    return OpenCodeImport(records=tuple(records), report=report, journal=journal, subagents=tuple(subagents))


def _links(
    stored: Stored, name: str, notes: list[str]
) -> dict[int, list[tuple[str | None, Stored, str | None]]]:
    """Where each sub-agent session hangs from: the task tool call whose metadata names it (OpenCode's
    task tool records `metadata.sessionId`; a resumed task passes `task_id`), else (inferred) the last
    message before the session was created."""
    found: dict[int, list[tuple[str | None, Stored, str | None]]] = {}
    naming = _calls_naming(stored)
    for child in stored.children:
        calls = naming.get(child.id, [])
        for position, part in calls:
            state = part["state"] if isinstance(part.get("state"), dict) else {}
            inputs = state["input"] if isinstance(state.get("input"), dict) else {}
            agent = inputs.get("subagent_type") if isinstance(inputs.get("subagent_type"), str) else None
            call = part.get("callID") if isinstance(part.get("callID"), str) else None
            found.setdefault(position, []).append((call, child, agent))
        if calls:
            continue
        if not stored.messages:
            notes.append(f"sub-agent session {child.id} is not linked: its parent session has no message")
            continue
        time = child.session.get("time")
        born = time.get("created") if isinstance(time, dict) else child.session.get("time_created")
        before = [p for p, (info, _) in enumerate(stored.messages) if _created(info) <= _number(born)]
        position = before[-1] if before else 0
        notes.append(
            f"sub-agent session {child.id}: no tool call names it; linked at the message before it (inferred)"
        )
        found.setdefault(position, []).append((None, child, None))
    return found


def _calls_naming(stored: Stored) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """The tool calls (message position, part) that name each session id, in message order: found in
    one pass over the messages, so linking many sub-agent sessions is linear in them."""
    naming: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for position, (_, parts) in enumerate(stored.messages):
        for part in parts:
            if part.get("type") == "tool":
                for session_id in _named(part):
                    naming.setdefault(session_id, []).append((position, part))
    return naming


def _named(part: dict[str, Any]) -> list[str]:
    """The session ids a tool part names: its `metadata.sessionId` and its `input.task_id` (each once)."""
    state = part.get("state")
    if not isinstance(state, dict):
        return []
    metadata = state.get("metadata")
    inputs = state.get("input")
    named = []
    if isinstance(metadata, dict) and isinstance(metadata.get("sessionId"), str):
        named.append(metadata["sessionId"])
    if isinstance(inputs, dict) and isinstance(inputs.get("task_id"), str) and inputs["task_id"] not in named:
        named.append(inputs["task_id"])
    return named


def _number(value: Any) -> float:
    return (
        float(value)
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value
        else 0.0
    )


def _created(info: dict[str, Any]) -> float:
    time = info.get("time")
    return _number(time.get("created")) if isinstance(time, dict) else 0.0


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

    def exclude(self, targets: Sequence[str], why: str) -> None:
        for target in targets:
            body = ContextExclusion(parent=self.leaf, target=target, reason=f"opencode: {why}")
            self._append(stable_id(target, "excluded"), body)

    def compaction(
        self, messages: Sequence[Message], nodes: Sequence[Sequence[tuple[str, bool]]], shape: Summarized
    ) -> None:
        """A waybook compaction standing for OpenCode's compaction message and its summary (kept, out of
        the context, by `pair`): its summary is the summary message's text, or where OpenCode does not send
        that message (an error), the compaction message's own text, as OpenCode sends it."""
        info, parts = messages[shape.summary]
        if not _skipped(info, parts) and any(_kind(p) in ("text", "reasoning", "tool") for p in parts):
            texts = [p["text"] for p in parts if _kind(p) == "text" and isinstance(p.get("text"), str)]
            text, preamble = "\n\n".join(texts), True
        else:
            blocks = _user_blocks(messages[shape.compaction][1])
            text, preamble = "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock)), False
        start = shape.tail if shape.tail is not None else shape.compaction + 1
        first_kept = nodes[start][0][0] if start < shape.summary else None
        compaction_id, summary_id = (
            messages[shape.compaction][0].get("id"),
            messages[shape.summary][0].get("id"),
        )
        part = next((p for p in messages[shape.compaction][1] if p.get("type") == "compaction"), {})
        details = {
            SOURCE: {
                "compaction": compaction_id,
                "summary": summary_id,
                "tail_start_id": part.get("tail_start_id"),
                "auto": part.get("auto"),
            }
        }
        body = Compaction(
            parent=self.leaf, summary=text, first_kept=first_kept, details=details, preamble=preamble
        )
        self._append(stable_id("oc", str(compaction_id), "compaction"), body)

    def pair(
        self, info: dict[str, Any], parts: Sequence[dict[str, Any]], kind: str
    ) -> list[tuple[str, bool]]:
        """OpenCode's compaction message or its summary, which the waybook compaction after them stands
        for: kept as they are (`opencode.compaction`, `opencode.summary`), out of the context."""
        self._clock(info)
        node_id = stable_id("oc", str(info.get("id")))
        data = {"info": info, "parts": list(parts)}
        self._append(node_id, CustomEntry(parent=self.leaf, type=f"opencode.{kind}", data=data))
        self.mapped += 1 + len(parts)
        return [(node_id, False)]

    def _clock(self, info: dict[str, Any]) -> None:
        time = info.get("time")
        self.at = max(self.at, _at(time.get("created") if isinstance(time, dict) else None, self.at))

    def message(self, info: dict[str, Any], parts: Sequence[dict[str, Any]]) -> list[tuple[str, bool]]:
        """Map one message; answers its nodes, each with whether it is in the model context."""
        self._clock(info)
        node_id = stable_id("oc", str(info.get("id")))
        kept = [p for p in parts if _kind(p) in KEPT_PARTS or _kind(p) not in _USED]
        details = {SOURCE: {"info": info, "parts": kept}} if kept or info else None
        role = info.get("role")
        if role == "user":
            content = self._user_content(parts)
            if content:
                self._append(node_id, UserMessage(parent=self.leaf, content=tuple(content), details=details))
                self.mapped += 1
                return [(node_id, True)]
        elif role == "assistant" and parts and not _skipped(info, parts):
            made = self._assistant(node_id, info, parts, details)
            if made:
                return made
        self._append(
            node_id,
            CustomEntry(parent=self.leaf, type="opencode.message", data={"info": info, "parts": list(parts)}),
        )
        return [(node_id, False)]

    def _user_content(self, parts: Sequence[dict[str, Any]]) -> list[Block]:
        content = _user_blocks(parts)
        self.mapped += len(content)  # one block per part sent
        return content

    def _assistant(
        self,
        node_id: str,
        info: dict[str, Any],
        parts: Sequence[dict[str, Any]],
        details: dict[str, Any] | None,
    ) -> list[tuple[str, bool]]:
        content: list[Block] = []
        results: list[tuple[str, ToolResult]] = []
        for part in parts:
            kind = _kind(part)
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
        if not content:
            return []  # OpenCode sends no message made of step starts alone
        failure = info.get("error")
        stop = "aborted" if isinstance(failure, dict) else STOPS.get(str(info.get("finish")), None)
        if stop is None:
            stop = "tool_use" if results else "end_turn"
            self.inferred.append(f"message {info.get('id')}: no finish reason; {stop} inferred")
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
            self._append(result_id, msgspec.structs.replace(result, parent=self.leaf))
        return [(node_id, True), *((result_id, True) for result_id, _ in results)]


_USED: Final = frozenset({"text", "reasoning", "tool", "file", "compaction", "subtask"})


def _user_blocks(parts: Sequence[dict[str, Any]]) -> list[Block]:
    """What OpenCode sends of a user message's parts, one block per part sent."""
    content: list[Block] = []
    for part in parts:
        kind = _kind(part)
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
    return content


def _kind(part: dict[str, Any]) -> str | None:
    kind = part.get("type")
    return kind if isinstance(kind, str) else None


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
    return not (aborted and any(_kind(p) not in ("step-start", "reasoning") for p in parts))
