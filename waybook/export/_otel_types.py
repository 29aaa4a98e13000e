"""The OpenTelemetry mapping's value types: its options, the span data it makes, what a journal became."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias

import attrs

from waybook._redact import Redactor, compile_patterns
from waybook.export._otel_content import CONTENT_LEVELS, AttributeValue, ContentLevel

TraceShape: TypeAlias = Literal["turn", "session"]
TRACE_SHAPES: Final = ("turn", "session")
SpanKind: TypeAlias = Literal["internal", "client"]


class OtelOptionError(ValueError):
    """An option of the OpenTelemetry mapping that is not one of its choices."""


@attrs.frozen(kw_only=True)
class OtelOptions:
    """How a journal becomes spans.

    `content`: none (default), metadata or full (see waybook.export._otel_content); full content is
    always masked by the exports' redaction, with `redact_patterns` (regular expressions) on top.
    `traces`: one trace per turn (default) or per session. `provider`: `gen_ai.provider.name` for every
    model call (default: guessed from the model's name, e.g. claude-* is anthropic; left out when unknown).
    """

    content: ContentLevel = "none"
    traces: TraceShape = "turn"
    redact_patterns: tuple[str, ...] = ()
    provider: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.content not in CONTENT_LEVELS:
            msg = f"content {self.content!r}: choose one of {', '.join(CONTENT_LEVELS)}"
            raise OtelOptionError(msg)
        if self.traces not in TRACE_SHAPES:
            msg = f"traces {self.traces!r}: choose one of {', '.join(TRACE_SHAPES)}"
            raise OtelOptionError(msg)
        compile_patterns(self.redact_patterns)  # RedactPatternError (a ValueError) names a bad one

    def redactor(self) -> Redactor:
        return Redactor(extra=compile_patterns(self.redact_patterns))


@attrs.frozen
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, AttributeValue] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, eq=True, hash=False)
class SpanData:
    """One span, ready for any OpenTelemetry exporter: ids, parent, times (ns since the epoch), attributes.

    `journal` and `seq` name the journal and the record that completes the span (a tool call's result,
    an assistant message, the user message that opens a turn): `since` keeps the spans whose record
    is after it. `error` is the status description of a span that ended in error (None: status unset).
    """

    name: str
    kind: SpanKind
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttributeValue]
    events: tuple[SpanEvent, ...] = ()
    error: str | None = None
    journal: str
    seq: int

    def as_json(self) -> dict[str, Any]:
        """The span as JSON (ids in hex, as OTLP/JSON writes them)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "trace_id": f"{self.trace_id:032x}",
            "span_id": f"{self.span_id:016x}",
            "parent_span_id": None if self.parent_id is None else f"{self.parent_id:016x}",
            "start_time_unix_nano": self.start_ns,
            "end_time_unix_nano": self.end_ns,
            "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in self.attributes.items()},
            "events": [
                {"name": e.name, "time_unix_nano": e.time_ns, "attributes": dict(e.attributes)}
                for e in self.events
            ],
            "error": self.error,
            "journal": self.journal,
            "seq": self.seq,
        }


@attrs.frozen
class JournalSpans:
    """What one journal (with the sub-agents it links) became: its spans, and which sub-agent journals
    were included or not found (`missing`: linked, but not given to the mapping)."""

    journal: str
    spans: tuple[SpanData, ...]
    subagents: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def traces(self) -> int:
        return len({span.trace_id for span in self.spans})
