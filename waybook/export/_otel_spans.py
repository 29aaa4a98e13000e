"""A session journal as OpenTelemetry span data, following the GenAI semantic conventions: a pure mapping.

Shape (docs/otel.md draws it): each turn (a user message and everything that answers it) is an
`invoke_agent` span; under it, a `chat {model}` span per assistant message (a model call) and an
`execute_tool {tool}` span per tool call, from the call to its result. With `traces="turn"` (the
default) every turn is its own trace; with `traces="session"` one `invoke_agent` span for the whole
session is the root of one trace and the turns are its children. A sub-agent's journal, linked by a
`waybook.subagent_link/1` record, is an `invoke_agent` span (with its turns below it) inside the trace
of the tool call that started it, as that call's child.

Ids are derived from the journal, never random (waybook.export._otel_ids): the same journal sends the
same ids every time, so a backend that keys spans by id keeps one copy. Timestamps are the records' own.

Nothing here imports OpenTelemetry's SDK: `waybook.export.otel` turns `SpanData` into the SDK's spans.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from waybook._redact import Redactor
from waybook.export._otel_attributes import memory_attributes, provider_of, receipt_attributes
from waybook.export._otel_content import (
    Attributes,
    AttributeValue,
    SpanContent,
    usage_attributes,
)
from waybook.export._otel_ids import record_times, span_id_of, trace_id_of
from waybook.export._otel_names import CHAT, EXECUTE_TOOL, INVOKE_AGENT, error, gen_ai
from waybook.export._otel_types import JournalSpans, OtelOptions, SpanData, SpanEvent
from waybook.model import (
    AssistantMessage,
    Compaction,
    Header,
    LeafMoved,
    MemoryPinMoved,
    MemoryUsed,
    Node,
    Record,
    SubagentLink,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.projections import TreeProjection, TreeState, fold

TOOL_ERROR: Final = "tool_error"
"""`error.type` of a tool call whose result says it failed (the conventions let an instrumentation name
its own error types; the model's own failures use their fallback, `_OTHER`)."""


def journal_spans(
    records: Sequence[Record],
    *,
    options: OtelOptions | None = None,
    linked: Mapping[str, Sequence[Record]] | None = None,
    since: int = 0,
    redactor: Redactor | None = None,
) -> JournalSpans:
    """The spans of a session journal's `records` (all of them, from its header), and of the sub-agent
    journals it links that `linked` holds (journal id -> records). Only spans whose record is after
    `since` are returned (a sub-agent's, when its link is after `since`). Pure and deterministic."""
    options = options or OtelOptions()
    content = SpanContent(options.content, redactor if redactor is not None else options.redactor())
    mapper = _JournalMapper(records, options=options, content=content, linked=linked or {}, stack=())
    spans = [span for span in mapper.spans(None) if span.seq > since or span.journal != mapper.journal]
    kept = [span for span in spans if span.journal == mapper.journal or mapper.link_seq(span) > since]
    return JournalSpans(mapper.journal, tuple(kept), tuple(mapper.included), tuple(mapper.missing))


# --- the mapping --------------------------------------------------------------------------------------


@attrs.frozen
class _Place:
    """Where a linked sub-agent journal goes: inside `trace_id`, under `parent_id`, as `link` says."""

    trace_id: int
    parent_id: int | None
    link: Record
    parent_journal: str


class _JournalMapper:
    def __init__(
        self,
        records: Sequence[Record],
        *,
        options: OtelOptions,
        content: SpanContent,
        linked: Mapping[str, Sequence[Record]],
        stack: tuple[str, ...],
    ) -> None:
        self.records = records
        self.options = options
        self.content = content
        self.linked = linked
        header = records[0].body if records and isinstance(records[0].body, Header) else None
        self.header = header
        self.journal = header.journal if header is not None else "journal"
        self.stack = (*stack, self.journal)
        self.agent = header.creator if header is not None else None
        self.times = record_times(records)
        self.tree: TreeState = fold(TreeProjection(), records)
        self.included: list[str] = []
        self.missing: list[str] = []
        self._link_seq: dict[int, int] = {}
        self.nodes: dict[str, Record] = {}
        self.at: dict[str, int] = {}
        self.parent: dict[str, str | None] = {}
        for index, record in enumerate(records):
            if isinstance(record.body, Node):
                self.nodes[record.id] = record
                self.at[record.id] = self.times[index]
                self.parent[record.id] = record.body.parent
        self.opener: dict[str, str] = {}
        """Each node's turn: the user message it answers (itself for a user message), else its root."""
        for node, parent in self.parent.items():
            is_user = isinstance(self.nodes[node].body, UserMessage)
            self.opener[node] = node if is_user or parent not in self.opener else self.opener[parent]
        self._branches()

    def link_seq(self, span: SpanData) -> int:
        return self._link_seq.get(span.span_id, 0)

    # --- shape --------------------------------------------------------------------------------------

    def spans(self, place: _Place | None) -> list[SpanData]:
        records, at, nodes, opener = self.records, self.at, self.nodes, self.opener
        if not records:
            return []
        ends: dict[str, int] = {}
        busy: set[str] = set()
        for record in nodes.values():
            turn = opener[record.id]
            ends[turn] = max(ends.get(turn, at[turn]), at[record.id])
            if isinstance(record.body, AssistantMessage):
                busy.add(turn)
        results: dict[str, list[Record]] = {}
        for record in nodes.values():
            if isinstance(record.body, ToolResult):
                results.setdefault(record.body.call_id, []).append(record)

        def result_of(call: ToolCallBlock, asked: Record) -> Record | None:
            """The first result for the call after it (a retried branch may reuse a call id)."""
            return next((r for r in results.get(call.call_id, ()) if r.seq > asked.seq), None)

        self.agent = self._agent_name(place)  # a sub-agent's turns go by the name its link gives
        shape = "session" if place is not None else self.options.traces
        session_span: SpanData | None = None
        if shape == "session":
            trace = place.trace_id if place else trace_id_of("session", self.journal, records[0].digest)
            session_span = self._session_span(trace, place)
        out: list[SpanData] = [] if session_span is None else [session_span]

        turn_spans: dict[str, SpanData] = {}
        tool_spans: dict[str, SpanData] = {}
        chat_spans: dict[str, SpanData] = {}
        pending_memory: Attributes = {}
        for record in records:
            body = record.body
            if isinstance(body, MemoryUsed | MemoryPinMoved):
                pending_memory.update(memory_attributes(body))
                continue
            if not isinstance(body, Node):
                continue
            turn = opener[record.id]
            if turn == record.id and (isinstance(body, UserMessage) or turn in busy):
                span = self._turn_span(record, ends[turn], session_span)
                turn_spans[turn] = span
                out.append(span)
            if isinstance(body, AssistantMessage):
                parent_span = turn_spans[turn]
                chat = self._chat_span(record, body, parent_span, pending_memory)
                pending_memory = {}
                chat_spans[record.id] = chat
                out.append(chat)
                for call in body.tool_calls:
                    tool = self._tool_span(record, call, result_of(call, record), parent_span)
                    tool_spans[call.call_id] = tool
                    out.append(tool)
        if pending_memory and out:
            last = out[-1]
            out[-1] = attrs.evolve(last, attributes={**last.attributes, **pending_memory})
        self._events(out, turn_spans)
        for record in records:
            if isinstance(record.body, SubagentLink):
                spawner = self._spawner(record.body, tool_spans, chat_spans, turn_spans) or session_span
                out.extend(self._subagent(record, record.body, spawner))
        return out

    def _branches(self) -> None:
        tree = self.tree
        self.active = set(tree.path_to(tree.leaf_id))
        count = tree.node_count
        leaf_at = list(range(count))
        for position in range(count - 1, -1, -1):
            last = tree.last_child[position]
            if last >= 0:
                leaf_at[position] = leaf_at[last]
        self.leaf_at = leaf_at
        self.reasons = {move.from_leaf: move.reason for move in tree.moves if move.from_leaf}

    def _branch(self, node_id: str) -> Attributes:
        tree = self.tree
        if node_id in self.active and tree.leaf_id is not None:
            return {"waybook.branch.state": "active", "waybook.branch.leaf": tree.leaf_id}
        leaf = tree.ids[self.leaf_at[tree.position(node_id)]]
        found: Attributes = {"waybook.branch.state": "abandoned", "waybook.branch.leaf": leaf}
        if self.reasons.get(leaf):
            found["waybook.branch.reason"] = self.reasons[leaf]
        return found

    # --- spans -------------------------------------------------------------------------------------

    def _common(self, operation: str) -> Attributes:
        return {gen_ai.GEN_AI_OPERATION_NAME: operation, gen_ai.GEN_AI_CONVERSATION_ID: self.journal}

    def _record(self, record: Record, prefix: str = "waybook.record") -> Attributes:
        return {f"{prefix}.seq": record.seq, f"{prefix}.id": record.id, f"{prefix}.digest": record.digest}

    def _proof(self) -> Attributes:
        last = self.records[-1]
        found: Attributes = {
            "waybook.journal.id": self.journal,
            "waybook.head.seq": last.seq,
            "waybook.head.digest": last.digest,
            "waybook.branch.count": len(self.tree.leaves()),
        }
        if self.tree.leaf_id is not None:
            found["waybook.branch.active_leaf"] = self.tree.leaf_id
        return found

    def _agent_name(self, place: _Place | None) -> str | None:
        if place is not None and isinstance(place.link.body, SubagentLink) and place.link.body.agent:
            return place.link.body.agent
        return self.header.creator if self.header is not None else None

    def _session_span(self, trace: int, place: _Place | None) -> SpanData:
        header = self.records[0]
        agent = self.agent
        attributes = self._common(INVOKE_AGENT) | self._proof()
        if agent:
            attributes[gen_ai.GEN_AI_AGENT_NAME] = agent
        if place is not None:
            attributes |= self._record(place.link, "waybook.subagent.link")
            attributes["waybook.subagent.parent_journal"] = place.parent_journal
        return SpanData(
            name=f"{INVOKE_AGENT} {agent}" if agent else INVOKE_AGENT,
            kind="internal",
            trace_id=trace,
            span_id=span_id_of(trace, self.journal, "session", header.digest),
            parent_id=None if place is None else place.parent_id,
            start_ns=self.times[0],
            end_ns=max(self.times[0], self.times[-1]),
            attributes=attributes,
            journal=self.journal,
            seq=header.seq,
        )

    def _turn_span(self, record: Record, end: int, session: SpanData | None) -> SpanData:
        trace = session.trace_id if session else trace_id_of("turn", self.journal, record.digest)
        attributes = self._common(INVOKE_AGENT)
        if self.agent:
            attributes[gen_ai.GEN_AI_AGENT_NAME] = self.agent
        attributes |= self._record(record) | self._branch(record.id)
        if session is None:
            attributes |= self._proof()
        if isinstance(record.body, UserMessage):
            attributes |= self.content.turn(record)
        start = self.at[record.id]
        return SpanData(
            name=f"{INVOKE_AGENT} {self.agent}" if self.agent else INVOKE_AGENT,
            kind="internal",
            trace_id=trace,
            span_id=span_id_of(trace, self.journal, "turn", record.digest),
            parent_id=None if session is None else session.span_id,
            start_ns=start,
            end_ns=max(start, end),
            attributes=attributes,
            journal=self.journal,
            seq=record.seq,
        )

    def _chat_span(
        self, record: Record, body: AssistantMessage, turn: SpanData, memory: Attributes
    ) -> SpanData:
        end = self.at[record.id]
        start = min(end, self.at.get(body.parent, end)) if body.parent else end
        attributes = self._common(CHAT)
        provider = self.options.provider or provider_of(body.model)
        if provider:
            attributes[gen_ai.GEN_AI_PROVIDER_NAME] = provider
        if body.model:
            attributes[gen_ai.GEN_AI_REQUEST_MODEL] = body.model
            attributes[gen_ai.GEN_AI_RESPONSE_MODEL] = body.model
        if body.stop_reason:
            attributes[gen_ai.GEN_AI_RESPONSE_FINISH_REASONS] = (body.stop_reason,)
        attributes |= usage_attributes(body.usage)
        attributes |= self._record(record) | self._branch(record.id) | memory
        failed = body.stop_reason == "error"
        if failed:
            attributes[error.ERROR_TYPE] = error.ErrorTypeValues.OTHER.value
        if self.content.level != "none":
            attributes |= self.content.chat(self._inputs(body), body)
        return SpanData(
            name=f"{CHAT} {body.model}" if body.model else CHAT,
            kind="client",
            trace_id=turn.trace_id,
            span_id=span_id_of(turn.trace_id, self.journal, "chat", record.digest),
            parent_id=turn.span_id,
            start_ns=start,
            end_ns=end,
            attributes=attributes,
            error="the model call ended in error" if failed else None,
            journal=self.journal,
            seq=record.seq,
        )

    def _inputs(self, body: AssistantMessage) -> list[Record]:
        """The records on the path since the model's previous call: what this call answered."""
        found: list[Record] = []
        node = body.parent
        while node is not None and node in self.nodes:
            record = self.nodes[node]
            if isinstance(record.body, AssistantMessage):
                break
            found.append(record)
            node = self.parent[node]
        found.reverse()
        return found

    def _tool_span(
        self, call_record: Record, call: ToolCallBlock, result: Record | None, turn: SpanData
    ) -> SpanData:
        start = self.at[call_record.id]
        body = result.body if result is not None and isinstance(result.body, ToolResult) else None
        attributes = self._common(EXECUTE_TOOL)
        attributes[gen_ai.GEN_AI_TOOL_NAME] = call.name
        attributes[gen_ai.GEN_AI_TOOL_CALL_ID] = call.call_id
        attributes |= self._record(call_record)
        attributes["waybook.tool.answered"] = result is not None
        failed = False
        if result is not None and body is not None:
            attributes |= self._record(result, "waybook.result")
            attributes["waybook.tool.is_error"] = body.is_error
            attributes |= receipt_attributes(body.details)
            failed = body.is_error
            if failed:
                attributes[error.ERROR_TYPE] = TOOL_ERROR
        attributes |= self._branch(result.id if result is not None else call_record.id)
        attributes |= self.content.tool(call, body)
        end = self.at[result.id] if result is not None else start
        return SpanData(
            name=f"{EXECUTE_TOOL} {call.name}",
            kind="internal",
            trace_id=turn.trace_id,
            span_id=span_id_of(turn.trace_id, self.journal, "tool", call_record.digest, call.call_id),
            parent_id=turn.span_id,
            start_ns=start,
            end_ns=max(start, end),
            attributes=attributes,
            error="the tool's result is an error" if failed else None,
            journal=self.journal,
            seq=(result if result is not None else call_record).seq,
        )

    def _events(self, out: list[SpanData], turns: Mapping[str, SpanData]) -> None:
        """Compactions and leaf moves, as events on the turn span they happened in."""
        events: dict[int, list[SpanEvent]] = {}
        for index, record in enumerate(self.records):
            body = record.body
            if isinstance(body, Compaction):
                turn = turns.get(self.opener[record.id])
                attributes: dict[str, AttributeValue] = {"waybook.record.seq": record.seq}
                if body.tokens_before is not None:
                    attributes["waybook.compaction.tokens_before"] = body.tokens_before
                name = "waybook.compaction"
            elif isinstance(body, LeafMoved) and body.to_leaf in self.opener:
                turn = turns.get(self.opener[body.to_leaf])
                attributes = {"waybook.record.seq": record.seq, "waybook.leaf_moved.to": body.to_leaf}
                if body.from_leaf:
                    attributes["waybook.leaf_moved.from"] = body.from_leaf
                attributes["waybook.leaf_moved.reason"] = body.reason
                name = "waybook.leaf_moved"
            else:
                continue
            if turn is not None:
                events.setdefault(turn.span_id, []).append(SpanEvent(name, self.times[index], attributes))
        for position, span in enumerate(out):
            if span.span_id in events:
                out[position] = attrs.evolve(span, events=span.events + tuple(events[span.span_id]))

    def _subagent(self, link: Record, body: SubagentLink, spawner: SpanData | None) -> list[SpanData]:
        """The spans of the sub-agent journal `link` names, under `spawner` (in its own trace when no
        span of this journal started it)."""
        records = self.linked.get(body.journal)
        if records is None or body.journal in self.stack:
            if body.journal not in self.missing and body.journal not in self.stack:
                self.missing.append(body.journal)
            return []
        if spawner is not None:
            place = _Place(spawner.trace_id, spawner.span_id, link, self.journal)
        else:
            place = _Place(trace_id_of("subagent", self.journal, link.digest), None, link, self.journal)
        child = _JournalMapper(
            records, options=self.options, content=self.content, linked=self.linked, stack=self.stack
        )
        spans = child.spans(place)
        self.included.append(child.journal)
        self.included.extend(j for j in child.included if j not in self.included)
        self.missing.extend(j for j in child.missing if j not in self.missing)
        for span in spans:
            self._link_seq[span.span_id] = link.seq
        return spans

    def _spawner(
        self,
        link: SubagentLink,
        tools: Mapping[str, SpanData],
        chats: Mapping[str, SpanData],
        turns: Mapping[str, SpanData],
    ) -> SpanData | None:
        """The span a sub-agent hangs under: its tool call's, else its node's (a tool result's call, an
        assistant message's one call or the message itself), else the turn its node is in."""
        if link.call_id and link.call_id in tools:
            return tools[link.call_id]
        record = self.nodes.get(link.node)
        if record is None:
            return None
        body = record.body
        if isinstance(body, ToolResult) and body.call_id in tools:
            return tools[body.call_id]
        if isinstance(body, AssistantMessage):
            calls = body.tool_calls
            if len(calls) == 1 and calls[0].call_id in tools:
                return tools[calls[0].call_id]
            return chats.get(record.id)
        return turns.get(self.opener[record.id])
