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
- A sub-agent is linked (a `waybook.subagent_link/1` record) where the session first names it: the
  `agent_progress` line of the call that started it, or the tool result whose `toolUseResult` names its
  `agentId`. A sub-agent transcript found beside the session that no line names by the time the session
  goes on after it started (warm-up agents, a compaction's summarizer) is linked where `AnchorIndex`
  infers, right after the first user or assistant line newer than its own first line (or at the end).

The import grows with its file (`GrowingTranscript`, waybook.formats._growing): a record depends only on
the lines at or before it, and what is still open (a message still streaming, a compaction whose summary
is the next line) waits for the line that closes it. Each mapped node keeps the rest of its line (cwd,
version, flags, usage...) in `details["claude_code"]`. Ids are Claude Code's uuids (`<uuid>:<n>` for the
further nodes of one line, `cc-<line>` for lines without a uuid), so importing the same file twice gives
the same records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from waybook.formats._foreign import (
    FALLBACK_TIMESTAMP,
    ForeignFormatError,
    ImportReport,
    LineTally,
    NotThisFormatError,
    stable_id,
    timestamp,
)
from waybook.formats._growing import JsonLines, feed_all
from waybook.formats.claude_code._blocks import assistant_content, rest_of, user_content, with_parent
from waybook.formats.claude_code._context import (
    SOURCE,
    TREE_TYPES,
    blocks_of,
    is_result,
    message_id,
    resume_chain,
)
from waybook.formats.claude_code._subagents import Anchor, AnchorIndex, SubagentStart
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
_MAPPING_ERRORS: Final = (KeyError, TypeError, ValueError, AttributeError, RecursionError)


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
    """The agent ids this session's lines name (their journals are linked)."""


def journal_id_for(session: str, agent: str | None = None) -> str:
    return stable_id(session if agent is None else f"{session}.agent-{agent}")


def import_claude_code(
    data: bytes | str,
    *,
    lenient: bool = False,
    subagents: Iterable[SubagentStart] = (),
    name: str | None = None,
) -> ClaudeCodeImport:
    """Map a Claude Code transcript to the records of a new journal, with a report of every line.

    `name` names the session's journals instead of its session id: the session's journal is `name`, a
    sub-agent's `<name>.agent-<agentId>` (so one session imports twice under two names).

    `subagents` are the sub-agent transcripts found beside the session (`subagent_start`): one that no
    line of the session names is linked where `AnchorIndex` infers it hangs from.
    """
    transcript = GrowingTranscript(lenient=lenient, name=name, subagents=subagents)
    feed_all(transcript, data)
    transcript.raise_problems()
    return transcript.result()


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


class GrowingTranscript:
    """A Claude Code transcript imported a line at a time (`waybook.formats._growing.GrowingImport`).

    The header waits for the first lines that name the session (a line of the uuid tree, a `sessionId`,
    a `timestamp`), as an import of the whole file takes them from there; every later record depends only
    on the lines before it. `add_subagent` tells it of a sub-agent transcript found beside the session
    after it started.
    """

    def __init__(
        self, *, lenient: bool = False, name: str | None = None, subagents: Iterable[SubagentStart] = ()
    ) -> None:
        self.lines = JsonLines(source=SOURCE, lenient=lenient, fields=_FIELDS)
        self._name = name
        self._held: list[tuple[int, dict[str, Any]]] = []
        self._subagents = {start.journal: start for start in subagents}
        self._builder: _Builder | None = None
        self._mapping: list[tuple[int, str]] = []
        self._finished = False

    # --- GrowingImport -------------------------------------------------------------------------------

    def feed(self, number: int, line: bytes | str) -> None:
        if self._finished:
            msg = "the transcript was finished: nothing more can be fed"
            raise ValueError(msg)
        value = self.lines.take(number, line)
        if value is None:
            return
        if self._builder is None:
            self._held.append((number, value))
            if _names_the_session(self._held):
                self._start()
            return
        self._take(number, value)

    @property
    def records(self) -> Sequence[NewRecord]:
        builder = self._builder
        return () if builder is None else _Joined(builder.header, builder.records)

    @property
    def problems(self) -> Sequence[tuple[int, str]]:
        return [*self.lines.problems, *self.lines.field_problems, *self._mapping]

    def pending(self) -> tuple[NewRecord, ...]:
        if self._finished:
            return ()
        done = len(self.records)
        clone = self._fork()
        clone.finish()
        return tuple(clone.records[done:])

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        if self._builder is None:
            if not any(line.get("type") in TREE_TYPES for _, line in self._held):
                return  # not a transcript (yet): `is_transcript` says so
            self._start()
        assert self._builder is not None
        try:
            self._builder.finish()
        except _MAPPING_ERRORS as exc:
            self._mapping.append((self.lines.total, f"{type(exc).__name__}: {exc}"))

    def report(self) -> ImportReport:
        if not self._finished:
            clone = self._fork()
            clone.finish()
            return clone.report()
        builder = self._builder
        tally, inferred = (LineTally(), []) if builder is None else (builder.tally, builder.inferred)
        return self.lines.report(tally, inferred)

    # --- the rest ------------------------------------------------------------------------------------

    @property
    def journal(self) -> str | None:
        """The journal id, once the lines naming the session were read."""
        return None if self._builder is None else self._builder.journal

    @property
    def is_transcript(self) -> bool:
        """Whether a line of Claude Code's uuid tree was read (a file with none is not a transcript)."""
        return self._builder is not None or any(line.get("type") in TREE_TYPES for _, line in self._held)

    @property
    def linked(self) -> Mapping[str, SubagentLink]:
        """The first link to each sub-agent journal among `records`, by journal id."""
        return {} if self._builder is None else self._builder.first_links

    def add_subagent(self, start: SubagentStart) -> bool:
        """Tell of a sub-agent transcript found beside the session. False if it comes too late: the session
        went on past where an import of the whole file links it (the import must start again with it)."""
        if start.journal in self._subagents:
            return True
        self._subagents[start.journal] = start
        return self._builder is None or self._builder.waits_for(start)

    def raise_problems(self) -> None:
        """Raise what an import of the whole file raises: lines that are not JSON objects, then fields of
        the wrong type, then a file that is no transcript, then lines that could not be mapped."""
        self.lines.raise_problems()
        if not self.is_transcript:
            why = "no user or assistant lines: this is not a Claude Code transcript"
            raise NotThisFormatError(SOURCE, why)
        if self._mapping:
            raise ForeignFormatError(SOURCE, list(self._mapping))

    def result(self) -> ClaudeCodeImport:
        """The finished import."""
        self.finish()
        assert self._builder is not None
        builder = self._builder
        return ClaudeCodeImport(
            records=tuple(self.records),
            report=self.report(),
            journal=builder.journal,
            agents=tuple(builder.agents),
        )

    def _start(self) -> None:
        builder = _Builder(self._held, self._name, self._subagents.values())
        self._builder = builder
        held, self._held = self._held, []
        for number, line in held:
            self._take(number, line)

    def _take(self, number: int, line: dict[str, Any]) -> None:
        assert self._builder is not None
        try:
            self._builder.take(number, line)
        except _MAPPING_ERRORS as exc:
            self._mapping.append((number, f"{type(exc).__name__}: {exc}"))

    def _fork(self) -> GrowingTranscript:
        """A copy that can be finished without changing this one (the lines themselves are shared: no
        one changes a line once read)."""
        clone = GrowingTranscript.__new__(GrowingTranscript)
        clone.__dict__.update(self.__dict__)
        clone.lines = self.lines.fork()
        clone._held = list(self._held)
        clone._subagents = dict(self._subagents)
        clone._mapping = list(self._mapping)
        clone._builder = None if self._builder is None else self._builder.fork()
        return clone


def _names_the_session(held: Sequence[tuple[int, Mapping[str, Any]]]) -> bool:
    """Whether the lines read hold all an import takes its header from."""
    return (
        any(line.get("type") in TREE_TYPES for _, line in held)
        and any(isinstance(line.get("sessionId"), str) for _, line in held)
        and any("timestamp" in line for _, line in held)
    )


class _Joined(Sequence[NewRecord]):
    """The header followed by the builder's records, without copying them."""

    def __init__(self, header: NewRecord, rest: list[NewRecord]) -> None:
        self._header = header
        self._rest = rest

    def __len__(self) -> int:
        return 1 + len(self._rest)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index == 0:
            return self._header
        if not 0 < index <= len(self._rest):
            raise IndexError(index)
        return self._rest[index - 1]


# --- mapping -------------------------------------------------------------------------------------------


_TRANSPARENT: Final = "transparent"
_CONTINUING: Final = "continuing"


@attrs.frozen
class _ChildLink:
    """A sub-agent to link by inference, queued in line order like a line (after the line that made it
    due, with the lines of an open turn)."""

    journal: str
    anchor: Anchor


class _Builder:
    def __init__(
        self,
        lines: Sequence[tuple[int, dict[str, Any]]],
        name: str | None,
        subagents: Iterable[SubagentStart],
    ) -> None:
        """`lines`: the first lines of the transcript, enough to name the session (its header)."""
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.agents: list[str] = []
        self.linked: set[tuple[str, str | None]] = set()  # (journal, call) of every link written
        self.first_links: dict[str, SubagentLink] = {}
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
        self.header = NewRecord(
            id=self.journal,
            at=self.first_at,
            body=Header(journal=self.journal, creator="claude-code", metadata={"claude_code": self.meta}),
        )
        self.at = self.first_at
        self.tree: dict[str, tuple[int, dict[str, Any]]] = {}  # every tree line read, for the resumed leaf
        self.leaf: str | None = None
        self.alias: dict[str, str] = {}  # source uuid -> the node that holds it
        self.attach: dict[str, str] = {}  # node -> where a child of it attaches (after entries spliced in)
        self.pointing: dict[str, set[str]] = {}  # the reverse of attach
        self.kind: dict[str, str] = {}  # node -> transparent / continuing / real
        self.parent_of: dict[str, str | None] = {}
        self.calls: dict[str, tuple[str, str, dict[str, Any]]] = {}  # call id -> (node, tool name, input)
        self.turn: list[tuple[int, dict[str, Any]]] = []
        self.deferred: list[tuple[int, dict[str, Any] | _ChildLink]] = []
        self.boundary: tuple[int, dict[str, Any], str, str] | None = None
        """A compaction boundary waiting for its summary, the next line: (line number, line, uuid, time)."""
        self.anchors = AnchorIndex()
        self.waiting = {start.journal: start for start in subagents}  # sub-agents no line named yet
        self.named: set[str] = set()  # sub-agent journals a line read names
        self.newest = ""  # the newest timestamp of a user or assistant line read

    def fork(self) -> _Builder:
        clone = _Builder.__new__(_Builder)
        clone.__dict__.update(self.__dict__)
        for key, value in self.__dict__.items():
            if isinstance(value, list | dict | set):
                setattr(clone, key, type(value)(value))
        clone.pointing = {node: set(nodes) for node, nodes in self.pointing.items()}
        clone.tally = self.tally.fork()
        anchors = AnchorIndex()
        anchors.__dict__.update(
            {k: type(v)(v) if isinstance(v, set | dict) else v for k, v in self.anchors.__dict__.items()}
        )
        clone.anchors = anchors
        return clone

    # lines

    def take(self, number: int, line: dict[str, Any]) -> None:
        """Lines of one streamed assistant message are buffered with the tool results that answer it and
        the side lines between them (Claude Code runs tools while the message still streams), so the
        message becomes one entry followed by its results."""
        self.at = timestamp(line.get("timestamp"), self.at)
        kind = line.get("type")
        if kind in TREE_TYPES and isinstance(line.get("uuid"), str):
            self.tree[line["uuid"]] = (number, line)
        self.anchors.see(line)
        for agent in _agents_named(line):
            self.named.add(journal_id_for(self.session, agent))
            self.waiting.pop(journal_id_for(self.session, agent), None)
        if self.boundary is not None:
            if self._is_transparent(line):
                self.deferred.append((number, line))
                return
            self._close_boundary(summary=line if self._summarizes(line) else None)
        self._route(number, line)
        due = self._due(line)
        for journal in due:
            start = self.waiting.pop(journal)
            anchor = self.anchors.anchor(start.first)
            if anchor is not None:
                self._route_child(_ChildLink(journal, anchor))

    def _route(self, number: int, line: dict[str, Any]) -> None:
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

    def _route_child(self, child: _ChildLink) -> None:
        if self.turn or self.boundary is not None:
            self.deferred.append((0, child))
        else:
            self._link_child(child)

    def _due(self, line: dict[str, Any]) -> list[str]:
        """The waiting sub-agents this line makes due: a user or assistant line newer than their start."""
        if line.get("type") not in ("user", "assistant"):
            return []
        at = timestamp(line.get("timestamp"), "")
        if not at:
            return []
        self.newest = max(self.newest, at)
        return [s.journal for s in sorted(self.waiting.values(), key=_start_order) if s.at < at]

    def waits_for(self, start: SubagentStart) -> bool:
        """Take a sub-agent found after the import started; False if its place has passed."""
        if start.journal in self.named or any(j == start.journal for j, _ in self.linked):
            return True
        if start.at < self.newest:
            return False
        self.waiting[start.journal] = start
        return True

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

    def _summarizes(self, line: dict[str, Any]) -> bool:
        assert self.boundary is not None
        return (
            line.get("type") == "user"
            and bool(line.get("isCompactSummary"))
            and line.get("parentUuid") == self.boundary[2]
        )

    def finish(self) -> None:
        if self.boundary is not None:
            self._close_boundary(summary=None)
        self._close_turn()
        for start in sorted(self.waiting.values(), key=_start_order):
            anchor = self.anchors.anchor(start.first)
            if anchor is not None:
                self._link_child(_ChildLink(start.journal, anchor))
        self.waiting = {}
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
            self.boundary = (number, line, line["uuid"], self.at)  # its summary is the next line
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
            parent = self._parent(line)
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
        progress = line.get("data")
        if line.get("type") == "progress" and isinstance(progress, dict):
            agent, call = progress.get("agentId"), line.get("parentToolUseID")
            if progress.get("type") == "agent_progress" and isinstance(agent, str) and isinstance(call, str):
                self._link_agent(agent, call)

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
            result = line.get("toolUseResult")
            agent = result.get("agentId") if isinstance(result, dict) else None
            if isinstance(agent, str):
                self._link_agent(agent, call)
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

    def _link_agent(self, agent: str, call: str) -> None:
        """Link the sub-agent `agent` a line names from the call `call` that started it (once a call)."""
        journal = journal_id_for(self.session, agent)
        if call not in self.calls or (journal, call) in self.linked:
            return
        node, tool, arguments = self.calls[call]
        kind = arguments.get("subagent_type") if isinstance(arguments.get("subagent_type"), str) else None
        link = SubagentLink(
            node=node,
            journal=journal,
            call_id=call,
            agent=kind,
            reason=f"claude-code: {tool} started agent {agent}",
        )
        self._write_link(stable_id("link", call), link)
        if agent not in self.agents:
            self.agents.append(agent)

    def _link_child(self, child: _ChildLink) -> None:
        node = self.alias.get(child.anchor.uuid)
        if node is None or any(journal == child.journal for journal, _ in self.linked):
            return
        link = SubagentLink(
            node=node, journal=child.journal, call_id=child.anchor.call_id, reason=child.anchor.reason
        )
        self._write_link(stable_id("link", child.journal), link)

    def _write_link(self, record_id: str, link: SubagentLink) -> None:
        self.records.append(NewRecord(id=record_id, at=self.at, body=link))
        self.linked.add((link.journal, link.call_id))
        self.first_links.setdefault(link.journal, link)

    def _close_boundary(self, *, summary: dict[str, Any] | None) -> None:
        """Write the held compaction (with its summary line, if this is it), then the side lines that
        came before that line."""
        assert self.boundary is not None
        number, line, uuid, at = self.boundary
        self.boundary = None
        now, self.at = self.at, at
        parent = self._parent(line, key="logicalParentUuid")
        text = "\n\n".join(b["text"] for b in blocks_of(summary) if "text" in b) if summary else ""
        meta: dict[str, Any] = (
            line["compactMetadata"] if isinstance(line.get("compactMetadata"), dict) else {}
        )
        tokens = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else None
        details = {
            "claude_code": {
                "line": number,
                "boundary": line,
                "summary_line": rest_of(summary) if summary else None,
                "summary_string": isinstance((summary.get("message") or {}).get("content"), str)
                if summary
                else None,
            }
        }
        body = Compaction(
            parent=parent,
            summary=text,
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
        self._run_deferred()
        self.at = now

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
        self._run_deferred()
        self.at = now

    def _run_deferred(self) -> None:
        """The lines (and inferred links) held behind a turn or a compaction, in the order they came."""
        deferred, self.deferred = self.deferred, []
        for n, line in deferred:
            if isinstance(line, _ChildLink):
                self._link_child(line)
                continue
            self.at = timestamp(line.get("timestamp"), self.at)
            self._line(n, line)

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


def _start_order(start: SubagentStart) -> tuple[str, str]:
    return (start.at, start.journal)


def _agents_named(line: Mapping[str, Any]) -> list[str]:
    """The sub-agents a session line names: an `agent_progress` line's, a tool result's `agentId`."""
    named = []
    data = line.get("data")
    if line.get("type") == "progress" and isinstance(data, dict) and data.get("type") == "agent_progress":
        named.append(data.get("agentId"))
    result = line.get("toolUseResult")
    if isinstance(result, dict):
        named.append(result.get("agentId"))
    return [agent for agent in named if isinstance(agent, str)]
