"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`), imported as waybook records.

Claude Code writes one JSON object a line. User, assistant, system, progress and attachment lines carry a
`uuid` and a `parentUuid`: a tree. On resume, Claude Code takes the leaves of that tree, walks each up
to its nearest user or assistant line, picks the newest of those by timestamp, and follows `parentUuid`
from it back to a root (a compaction boundary has no parent, so the walk stops there).
`replay_context` below rebuilds, from the file alone, the messages Claude Code sends to the model; the
tests hold every import to it. Import maps:

- An assistant turn, streamed as several lines that share one `message.id` (a content block each),
  becomes one terminal assistant entry. Where no line has a `stop_reason`, it is inferred (`tool_use` if
  the turn calls a tool, else `end_turn`) and the inference is recorded in `details` and the report.
  Its usage is the last line's counts (the final ones; earlier lines repeat the input and count the output
  so far), with the cache writes' split by lifetime flattened to `cache_creation.ephemeral_5m_input_tokens`
  and `cache_creation.ephemeral_1h_input_tokens`: the hour-long writes cost more (docs/cost.md).
- A user line becomes a user message, or one tool result per `tool_result` block (parallel results chain
  one after another, so they make no false branch).
- A `compact_boundary` system line and the summary line after it become one compaction whose summary is
  shown as written (`preamble: false`; Claude Code's summary carries its own framing), hanging from the
  boundary's `logicalParentUuid`.
- Progress lines, other system lines, attachments and the lines without a uuid (`file-history-snapshot`,
  `queue-operation`, `summary`, ...) are kept verbatim as custom entries `claude_code.<type>`, out of the
  model context, spliced into the chain where they occur.
- Where a line's parent is not the current leaf, an explicit leaf move records the branch; where the
  active leaf had to be inferred (the newest user or assistant leaf, as Claude Code resumes), the move's
  reason says so.
- A tool result whose `toolUseResult` names an `agentId` links (a `waybook.subagent_link/1` record) the
  tool call to the sub-agent's own journal, `<session>.agent-<agentId>`.

Each mapped node keeps the rest of its line (cwd, version, flags, usage...) in `details["claude_code"]`.
Ids are Claude Code's uuids (`<uuid>:<n>` for the further nodes of one line, `cc-<line>` for lines
without a uuid), so importing the same file twice gives the same records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from waybook.formats._foreign import (
    FALLBACK_TIMESTAMP,
    ForeignFormatError,
    ImportReport,
    LineTally,
    NotThisFormatError,
    check_fields,
    read_json_lines,
    stable_id,
    timestamp,
)
from waybook.formats.claude_code._blocks import assistant_content, rest_of, user_content, with_parent
from waybook.formats.claude_code._context import (
    SOURCE,
    TREE_TYPES,
    blocks_of,
    is_result,
    message_id,
    resume_chain,
)
from waybook.formats.claude_code._subagents import Anchor
from waybook.model import (
    AnyBody,
    AssistantMessage,
    Compaction,
    CustomEntry,
    Header,
    LeafMoved,
    NewRecord,
    SubagentLink,
    TextBlock,
    ToolResult,
    UserMessage,
)

_STOP_REASONS: Final = frozenset(
    {"end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"}
)


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int]:
    """A turn's usage as waybook records it: the counts as Claude Code wrote them, and the split of the
    cache writes by lifetime (`cache_creation.ephemeral_5m_input_tokens`, `..._1h_...`), flattened: the
    hour-long writes are priced apart (docs/cost.md)."""
    counts = {key: value for key, value in usage.items() if type(value) is int}
    split = usage.get("cache_creation")
    if isinstance(split, Mapping):
        counts |= {f"cache_creation.{key}": value for key, value in split.items() if type(value) is int}
    return counts


@attrs.frozen
class ClaudeCodeImport:
    records: tuple[NewRecord, ...]
    report: ImportReport
    journal: str
    """The journal id: the session id, or `<session>.agent-<agentId>` for a sub-agent's file."""
    agents: tuple[str, ...]
    """The agent ids this session's tool results name (their journals are linked)."""


def journal_id_for(session: str, agent: str | None = None) -> str:
    return stable_id(session if agent is None else f"{session}.agent-{agent}")


def import_claude_code(
    data: bytes | str,
    *,
    lenient: bool = False,
    links: Mapping[str, Anchor] | None = None,
    name: str | None = None,
) -> ClaudeCodeImport:
    """Map a Claude Code transcript to the records of a new journal, with a report of every line.

    `name` names the session's journals instead of its session id: the session's journal is `name`, a
    sub-agent's `<name>.agent-<agentId>` (so one session imports twice under two names).

    `links` maps further sub-agent journal ids to where they hang from (`subagent_anchor`), for the
    sub-agents whose spawning tool result does not name them (a folder import finds them beside the
    session).
    """
    lines, skipped, total = read_json_lines(data, source=SOURCE, lenient=lenient)
    lines = check_fields(lines, skipped, _FIELDS, source=SOURCE, lenient=lenient)
    if not any(line.get("type") in TREE_TYPES for _, line in lines):
        raise NotThisFormatError(SOURCE, "no user or assistant lines: this is not a Claude Code transcript")
    builder = _Builder(lines, name)
    problems: list[tuple[int, str]] = []
    for number, line in lines:
        try:
            builder.take(number, line)
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            problems.append((number, f"{type(exc).__name__}: {exc}"))
    if problems:
        raise ForeignFormatError(SOURCE, problems)
    try:
        builder.finish(links or {})
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        raise ForeignFormatError(SOURCE, [(total, f"{type(exc).__name__}: {exc}")]) from None
    report = builder.tally.report(SOURCE, total, skipped, builder.inferred)
    header = NewRecord(
        id=builder.journal,
        at=builder.first_at,
        body=Header(journal=builder.journal, creator="claude-code", metadata={"claude_code": builder.meta}),
    )
    return ClaudeCodeImport(
        records=(header, *builder.records),
        report=report,
        journal=builder.journal,
        agents=tuple(builder.agents),
    )


_ID = (str,)
_PARENT = (str, type(None))
_FIELDS: Final = {
    "type": _ID,
    "uuid": _ID,
    "parentUuid": _PARENT,
    "logicalParentUuid": _PARENT,
    "sessionId": _ID,
    "agentId": _ID,
    "timestamp": _ID,
    "message": (dict,),
    "isSidechain": (bool, type(None)),
    "isCompactSummary": (bool, type(None)),
}
"""The fields the mapping indexes or branches on, and the types Claude Code writes them with."""


# --- mapping -------------------------------------------------------------------------------------------


_TRANSPARENT: Final = "transparent"
_CONTINUING: Final = "continuing"


class _Builder:
    def __init__(self, lines: list[tuple[int, dict[str, Any]]], name: str | None = None) -> None:
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.agents: list[str] = []
        self.linked: set[str] = set()
        first = next((line for _, line in lines if isinstance(line.get("sessionId"), str)), {})
        session = first.get("sessionId") or "claude-code-session"
        agent = first.get("agentId") if first.get("isSidechain") else None
        self.session = name or session
        self.journal = journal_id_for(self.session, agent)
        self.meta = {
            k: first[k] for k in ("sessionId", "agentId", "version", "cwd", "gitBranch", "slug") if k in first
        }
        self.first_at = timestamp(
            next((line.get("timestamp") for _, line in lines if "timestamp" in line), None),
            FALLBACK_TIMESTAMP,
        )
        self.at = self.first_at
        self.uuids = {line["uuid"] for _, line in lines if isinstance(line.get("uuid"), str)}
        self.summaries = {
            line.get("parentUuid"): (n, line)
            for n, line in lines
            if line.get("type") == "user" and line.get("isCompactSummary")
        }
        self.tree = {
            line["uuid"]: (n, line) for n, line in lines if line.get("type") in TREE_TYPES and "uuid" in line
        }
        self.leaf: str | None = None
        self.alias: dict[str, str] = {}  # source uuid -> the node that holds it
        self.attach: dict[str, str] = {}  # node -> where a child of it attaches (after entries spliced in)
        self.pointing: dict[str, set[str]] = {}  # the reverse of attach
        self.kind: dict[str, str] = {}  # node -> transparent / continuing / real
        self.parent_of: dict[str, str | None] = {}
        self.calls: dict[str, tuple[str, str, dict[str, Any]]] = {}  # call id -> (node, tool name, input)
        self.turn: list[tuple[int, dict[str, Any]]] = []
        self.deferred: list[tuple[int, dict[str, Any]]] = []

    # lines

    def take(self, number: int, line: dict[str, Any]) -> None:
        """Lines of one streamed assistant message are buffered with the tool results that answer it and
        the side lines between them (Claude Code runs tools while the message still streams), so the
        message becomes one entry followed by its results."""
        self.at = timestamp(line.get("timestamp"), self.at)
        kind = line.get("type")
        if kind == "assistant" and isinstance(line.get("message"), dict):
            if self.turn and message_id(self.turn[0][1]) != message_id(line):
                self._close_turn()
            self.turn.append((number, line))
        elif self.turn and (self._is_transparent(line) or self._answers_turn(line)):
            self.deferred.append((number, line))
        else:
            self._close_turn()
            self._line(number, line)

    def _answers_turn(self, line: dict[str, Any]) -> bool:
        if line.get("type") != "user":
            return False
        calls = {
            b.get("id")
            for _, turn_line in self.turn
            for b in blocks_of(turn_line)
            if b.get("type") == "tool_use"
        }
        blocks = blocks_of(line)
        return bool(blocks) and all(is_result(b) and b.get("tool_use_id") in calls for b in blocks)

    def finish(self, links: Mapping[str, Anchor]) -> None:
        self._close_turn()
        for journal, anchor in sorted(links.items()):
            node = self.alias.get(anchor.uuid)
            if node is not None and journal not in self.linked:
                link = SubagentLink(node=node, journal=journal, call_id=anchor.call_id, reason=anchor.reason)
                self.records.append(NewRecord(id=stable_id("link", journal), at=self.at, body=link))
        self._select_resumed_leaf()

    def _is_transparent(self, line: dict[str, Any]) -> bool:
        kind = line.get("type")
        if kind == "system":
            return line.get("subtype") != "compact_boundary"
        return kind not in ("user", "assistant")

    def _line(self, number: int, line: dict[str, Any]) -> None:
        kind = line.get("type")
        if kind == "user" and line.get("isCompactSummary") and line.get("parentUuid") in self.alias:
            self.alias[line["uuid"]] = self.alias[line["parentUuid"]]  # its compaction holds it already
            self.tally.mapped(number)
        elif kind == "user" and isinstance(line.get("message"), dict):
            self._user(number, line)
        elif kind == "system" and line.get("subtype") == "compact_boundary":
            self._compaction(number, line)
        else:
            self._keep(number, line)

    # nodes

    def _parent(self, line: dict[str, Any], *, key: str = "parentUuid") -> str | None:
        source = line.get(key)
        if not isinstance(source, str) or source not in self.alias:
            return None
        node = self.alias[source]
        return self.attach.get(node, node)

    def _only_side_lines_before(self) -> bool:
        """Whether the path to the leaf holds only kept side lines (a snapshot before the first prompt)."""
        node = self.leaf
        while node is not None:
            if self.kind.get(node) != _TRANSPARENT:
                return False
            node = self.parent_of.get(node)
        return True

    def _add(self, record_id: str, body: AnyBody, *, role: str, parent: str | None, why: str) -> None:
        if parent is None and self.leaf is not None and self._only_side_lines_before():
            parent = self.leaf  # a root after leading side lines continues them: no false second root
            body = with_parent(body, parent)
        if parent != self.leaf:
            move = LeafMoved(
                from_leaf=self.leaf,
                to_leaf=parent,
                reason=f"claude-code: {why} (inferred from parentUuid)",
                actor="claude-code",
            )
            self.records.append(NewRecord(id=f"move:{record_id}", at=self.at, body=move))
        self.records.append(NewRecord(id=record_id, at=self.at, body=body))
        self.kind[record_id] = role
        self.parent_of[record_id] = parent
        self.attach[record_id] = record_id
        self.pointing[record_id] = {record_id}
        if parent is not None and role != "real":
            moved = self.pointing.pop(parent, set())  # children of what this continues attach after it
            for node in moved:
                self.attach[node] = record_id
            self.pointing[record_id] |= moved
        self.leaf = record_id

    def _keep(self, number: int, line: dict[str, Any]) -> None:
        uuid = line.get("uuid")
        record_id = uuid if isinstance(uuid, str) and uuid not in self.alias else f"cc-{number}"
        if isinstance(uuid, str) and line.get("type") in TREE_TYPES:
            parent = self._parent(line) if line.get("parentUuid") in self.uuids else None
            why = (
                "continues an earlier entry"
                if parent is not None
                else "a line with no parent in this file starts a new root"
            )
        else:
            parent, why = self.leaf, ""
        sub = line.get("subtype") if line.get("type") == "system" else None
        name = f"claude_code.{line.get('type')}" + (f".{sub}" if isinstance(sub, str) else "")
        self._add(
            record_id,
            CustomEntry(parent=parent, type=stable_id(name), data=line),
            role=_TRANSPARENT,
            parent=parent,
            why=why,
        )
        if isinstance(uuid, str):
            self.alias[uuid] = record_id
        self.tally.kept(number)

    def _user(self, number: int, line: dict[str, Any]) -> None:
        uuid = line["uuid"]
        parent = self._parent(line)
        why = "continues an earlier entry" if parent is not None else "a new root"
        rest = rest_of(line)
        blocks = blocks_of(line)
        nodes = 0
        text_blocks = [b for b in blocks if not is_result(b)]
        for block in (b for b in blocks if is_result(b)):
            call = str(block.get("tool_use_id"))
            content = block.get("content")
            form = "text" if isinstance(content, str) else "blocks"
            mapped = (TextBlock(text=content),) if isinstance(content, str) else user_content(content or [])
            details = {"claude_code": {"line": number, "content_form": form, "rest": rest}}
            name = self.calls.get(call, ("", None, {}))[1]
            body = ToolResult(
                parent=parent,
                call_id=call,
                content=mapped,
                tool_name=name,
                is_error=bool(block.get("is_error")),
                details=details,
            )
            record_id = uuid if nodes == 0 else f"{uuid}:{nodes}"
            self._add(
                record_id, body, role=_CONTINUING if call in self.calls else "real", parent=parent, why=why
            )
            parent, nodes = record_id, nodes + 1
            self._link_agent(line, call)
        if text_blocks or not nodes:
            details = {
                "claude_code": {
                    "line": number,
                    "rest": rest,
                    "string": isinstance(line["message"].get("content"), str),
                }
            }
            message = UserMessage(parent=parent, content=user_content(text_blocks), details=details)
            record_id = uuid if nodes == 0 else f"{uuid}:{nodes}"
            self._add(record_id, message, role="real", parent=parent, why=why)
        self.alias[uuid] = self.leaf or uuid
        self.tally.mapped(number)

    def _link_agent(self, line: dict[str, Any], call: str) -> None:
        result = line.get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent, str) or call not in self.calls:
            return
        node, tool, arguments = self.calls[call]
        journal = journal_id_for(self.session, agent)
        kind = arguments.get("subagent_type") if isinstance(arguments.get("subagent_type"), str) else None
        link = SubagentLink(
            node=node,
            journal=journal,
            call_id=call,
            agent=kind,
            reason=f"claude-code: {tool} started agent {agent}",
        )
        self.records.append(NewRecord(id=stable_id("link", call), at=self.at, body=link))
        self.agents.append(agent)
        self.linked.add(journal)

    def _compaction(self, number: int, line: dict[str, Any]) -> None:
        uuid = line["uuid"]
        parent = self._parent(line, key="logicalParentUuid")
        summary_line = self.summaries.get(uuid)
        summary = (
            "\n\n".join(b["text"] for b in blocks_of(summary_line[1]) if "text" in b) if summary_line else ""
        )
        meta: dict[str, Any] = (
            line["compactMetadata"] if isinstance(line.get("compactMetadata"), dict) else {}
        )
        tokens = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None
        details = {
            "claude_code": {
                "line": number,
                "boundary": line,
                "summary_line": rest_of(summary_line[1]) if summary_line else None,
                "summary_string": isinstance((summary_line[1].get("message") or {}).get("content"), str)
                if summary_line
                else None,
            }
        }
        body = Compaction(
            parent=parent,
            summary=summary,
            first_kept=None,
            tokens_before=tokens,
            details=details,
            preamble=False,
        )
        self._add(
            uuid, body, role="real", parent=parent, why="a compaction continues from its logical parent"
        )
        self.alias[uuid] = uuid
        self.tally.mapped(number)
        if summary_line:
            self.alias[summary_line[1]["uuid"]] = uuid

    def _close_turn(self) -> None:
        if not self.turn:
            return
        turn, self.turn = self.turn, []
        now = (
            self.at
        )  # the line that closes the turn has its own time; the turn and its deferred lines theirs
        self.at = timestamp(turn[-1][1].get("timestamp"), self.at)
        number, first = turn[0]
        uuid = first["uuid"]
        blocks: list[dict[str, Any]] = [b for _, line in turn for b in blocks_of(line)]
        content, extras = assistant_content(blocks)
        stops = [line["message"].get("stop_reason") for _, line in turn if line["message"].get("stop_reason")]
        stop = stops[-1] if stops and stops[-1] in _STOP_REASONS else None
        calls = [b for b in blocks if b.get("type") == "tool_use"]
        inferred = stop is None
        if stop is None:
            stop = "tool_use" if calls else "end_turn"
            self.inferred.append(
                f"line {number}: stop reason {stop!r} inferred (no line of the turn has one)"
            )
        last = turn[-1][1]["message"]
        usage = last.get("usage") if isinstance(last.get("usage"), dict) else {}
        details = {
            "claude_code": {
                "lines": [n for n, _ in turn],
                "rest": [rest_of(line) for _, line in turn],
                "blocks": extras,
                "stop_reason": "inferred" if inferred else "recorded",
            }
        }
        body = AssistantMessage(
            parent=self._parent(first),
            content=content,
            stop_reason=stop,
            model=last.get("model") if isinstance(last.get("model"), str) else None,
            usage=usage_counts(usage) or None,
            details=details,
        )
        self._add(uuid, body, role="real", parent=body.parent, why="continues an earlier entry")
        for n, line in turn:
            self.alias[line["uuid"]] = uuid
            self.tally.mapped(n)
        for call in calls:
            arguments = call.get("input")
            self.calls[str(call.get("id"))] = (
                uuid,
                str(call.get("name")),
                arguments if isinstance(arguments, dict) else {},
            )
        deferred, self.deferred = self.deferred, []
        for n, line in deferred:
            self.at = timestamp(line.get("timestamp"), self.at)
            self._line(n, line)
        self.at = now

    def _select_resumed_leaf(self) -> None:
        chain = resume_chain(self.tree)
        if not chain:
            return
        node = self.alias.get(chain[-1]["uuid"])
        if node is None:
            return
        target = self.attach.get(node, node)
        walk: str | None = self.leaf
        while walk is not None and walk != target and self.kind.get(walk) == _TRANSPARENT:
            walk = self.parent_of.get(walk)
        if walk == target:
            return
        reason = (
            "claude-code: the active leaf is inferred as the newest user or assistant leaf, as Claude Code "
            "resumes"
        )
        self.records.append(
            NewRecord(
                id=f"move:resume:{node}",
                at=self.at,
                body=LeafMoved(from_leaf=self.leaf, to_leaf=target, reason=reason, actor="claude-code"),
            )
        )
        self.inferred.append(f"the active leaf {target} (the newest user or assistant leaf)")
        self.leaf = target
