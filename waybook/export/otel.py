"""Send session journals to the observability tools teams already run, as OpenTelemetry GenAI traces.

    from waybook.export import otel

    report = otel.send(journal, endpoint="http://127.0.0.1:6006/v1/traces", store=store)

Every model call becomes a `chat {model}` span, every tool call an `execute_tool {tool}` span, every turn
an `invoke_agent` span, with the GenAI semantic conventions' attributes (model, usage, finish reason, tool
name and call id, conversation id) and waybook's own (`waybook.*`: each record's seq and digest, the
journal's head, the branch a span lies on, memory receipts). Sub-agent journals the session links are
child spans of the tool call that started them. Ids are derived from the journal, so sending again sends
the same ids. Content (messages, tool arguments and results) is left out unless asked for, and masked by
the exports' redaction when it is sent. docs/otel.md has the whole mapping.

The mapping is pure (`spans_of`, `journal_spans`: records in, `SpanData` out); sending hands those spans
to OpenTelemetry's SDK and its OTLP/HTTP exporter (the `otel` extra: `pip install 'waybook[otel]'`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

import attrs

from waybook._redact import Redactor
from waybook._version import __version__
from waybook.export._otel_spans import journal_spans
from waybook.export._otel_types import JournalSpans, OtelOptionError, OtelOptions, SpanData, SpanEvent
from waybook.journal import JsonlJournal, SessionJournal, iter_shown
from waybook.model import Header, JournalError, Record, SubagentLink

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter

    from waybook.stores import JournalStore

__all__ = [
    "DEFAULT_TRACES_PATH",
    "JournalSpans",
    "OtelOptionError",
    "OtelOptions",
    "OtelSendError",
    "SendReport",
    "SpanData",
    "SpanEvent",
    "journal_spans",
    "readable_spans",
    "send",
    "spans_of",
    "traces_endpoint",
]

DEFAULT_TRACES_PATH: Final = "/v1/traces"
"""OTLP/HTTP's path for traces, added to an endpoint given without a path (as OTEL_EXPORTER_OTLP_ENDPOINT)."""

BATCH: Final = 512
"""Spans per OTLP request (the SDK's default export batch size)."""

_EXPORTER_LOGGER: Final = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


class OtelSendError(JournalError):
    """Spans were not delivered: the backend refused them or could not be reached. Ids are derived from
    the journal, so sending again is safe (a backend keeps one copy of each span)."""


@attrs.frozen
class SendReport:
    """What `send` did: per journal its spans, traces, included and missing sub-agent journals; how many
    strings the redaction masked (by pattern) when content was sent."""

    endpoint: str | None
    content: str
    traces: str
    journals: tuple[JournalSpans, ...]
    redacted: Mapping[str, int]

    @property
    def spans(self) -> int:
        return sum(len(j.spans) for j in self.journals)

    def as_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "content": self.content,
            "traces": self.traces,
            "spans": self.spans,
            "journals": [
                {
                    "journal": j.journal,
                    "spans": len(j.spans),
                    "traces": j.traces,
                    "subagents": list(j.subagents),
                    "missing_subagents": list(j.missing),
                }
                for j in self.journals
            ],
            "redacted": dict(self.redacted),
        }


def traces_endpoint(url: str) -> str:
    """The OTLP/HTTP traces URL for `url`: as given when it has a path, else with /v1/traces added.
    A URL that is not http(s)://HOST[...] raises OtelOptionError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        msg = f"endpoint {url!r}: give an http:// or https:// URL (e.g. http://127.0.0.1:4318/v1/traces)"
        raise OtelOptionError(msg)
    if parts.path in ("", "/"):
        parts = parts._replace(path=DEFAULT_TRACES_PATH)
    return urlunsplit(parts)


# --- reading journals -----------------------------------------------------------------------------


def spans_of(
    journals: SessionJournal | Iterable[SessionJournal],
    *,
    store: JournalStore | None = None,
    options: OtelOptions | None = None,
    since: int = 0,
    redactor: Redactor | None = None,
) -> tuple[JournalSpans, ...]:
    """The spans of each journal with the sub-agents it links: found in `store` when given, else beside
    the journal's file (`<journal id>.jsonl`). A journal that another given journal links is sent inside
    that one's trace only. `since` (one journal only) keeps what came after that seq. `redactor` masks
    content (default: a new one from `options`) and counts what it masked. No network.

    Each journal is read whole when its turn comes (an iterator may open each one just before and close
    it after, as `waybook otel send --store URL` does)."""
    options = options or OtelOptions()
    if since < 0:
        msg = f"since {since}: give a seq of 0 or more"
        raise OtelOptionError(msg)
    given: Iterable[SessionJournal] = [journals] if isinstance(journals, SessionJournal) else journals
    every: list[tuple[str, list[Record], dict[str, list[Record]]]] = []
    for journal in given:
        if since and every:
            msg = "since applies to one journal; give one journal with it"
            raise OtelOptionError(msg)
        records = list(iter_shown(journal, journal.read()))
        role = records[0].body.role if records and isinstance(records[0].body, Header) else None
        if role != "session":
            what = "has no header" if role is None else f"is a {role} journal"
            msg = f"journal {journal.name} {what}; only session journals are sent as traces"
            raise OtelOptionError(msg)
        head = records[-1].seq
        if since > head:
            msg = f"since {since}: journal {journal.name} ends at seq {head}"
            raise OtelOptionError(msg)
        linked = _linked_records(records, _finder(journal, store))
        every.append((_journal_id(journal, records), records, linked))
    nested = {name for _, _, linked in every for name in linked}
    redactor = redactor if redactor is not None else options.redactor()
    return tuple(
        journal_spans(records, options=options, linked=linked, since=since, redactor=redactor)
        for name, records, linked in every
        if name not in nested
    )


def _journal_id(journal: SessionJournal, records: Sequence[Record]) -> str:
    header = records[0].body if records else None
    return str(getattr(header, "journal", journal.name))


def _open_linked(store: JournalStore, journal_id: str) -> list[Record] | None:
    """The records of journal `journal_id` of `store`, or None when the store has no such journal: the
    one place the mapping opens a store's journal."""
    if not store.exists(journal_id):
        return None
    with store.open(journal_id) as journal:
        return list(iter_shown(journal, journal.read()))


def _finder(journal: SessionJournal, store: JournalStore | None) -> Any:
    if store is not None:
        return lambda journal_id: _open_linked(store, journal_id)
    path = getattr(journal, "path", None)
    if not isinstance(path, Path):
        return lambda journal_id: None
    return lambda journal_id: _beside(path.parent, journal_id)


def _beside(folder: Path, journal_id: str) -> list[Record] | None:
    candidate = folder / f"{journal_id}.jsonl"
    if "/" in journal_id or not candidate.is_file():
        return None
    with JsonlJournal(candidate, readonly=True) as journal:
        return list(iter_shown(journal, journal.read()))


def _linked_records(records: Sequence[Record], find: Any) -> dict[str, list[Record]]:
    """Every sub-agent journal reachable from `records` through links, by id (each read once)."""
    found: dict[str, list[Record]] = {}
    todo = [r.body.journal for r in records if isinstance(r.body, SubagentLink)]
    while todo:
        name = todo.pop(0)
        if name in found:
            continue
        linked = find(name)
        if linked is None:
            continue
        found[name] = linked
        todo.extend(r.body.journal for r in linked if isinstance(r.body, SubagentLink))
    return found


# --- sending ----------------------------------------------------------------------------------------


def send(
    journals: SessionJournal | Iterable[SessionJournal],
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    store: JournalStore | None = None,
    options: OtelOptions | None = None,
    since: int = 0,
    service_name: str = "waybook",
    timeout: float = 10.0,
    exporter: SpanExporter | None = None,
) -> SendReport:
    """Send journals as traces to an OTLP/HTTP `endpoint` (or to `exporter`, any OpenTelemetry span
    exporter, such as the SDK's InMemorySpanExporter). Every span is built before the first byte is sent;
    a backend that refuses a batch or cannot be reached raises OtelSendError."""
    options = options or OtelOptions()
    if exporter is None and endpoint is None:
        msg = "give an endpoint (an OTLP/HTTP URL) or an exporter"
        raise OtelOptionError(msg)
    url = traces_endpoint(endpoint) if endpoint is not None else None
    redactor = options.redactor()
    built = spans_of(journals, store=store, options=options, since=since, redactor=redactor)
    every = [span for journal in built for span in journal.spans]
    readable = readable_spans(every, service_name=service_name)
    own = exporter is None
    if exporter is None:
        exporter = _otlp_exporter(url or "", headers, timeout)
    try:
        _export(exporter, readable, url or "the exporter")
    finally:
        if own:
            exporter.shutdown()
    return SendReport(url, options.content, options.traces, built, dict(sorted(redactor.counts.items())))


def readable_spans(spans: Sequence[SpanData], *, service_name: str = "waybook") -> list[ReadableSpan]:
    """`SpanData` as the SDK's ReadableSpan, the type every span exporter takes."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.semconv.attributes.service_attributes import SERVICE_NAME

    resource = Resource.create({SERVICE_NAME: service_name})
    scope = InstrumentationScope("waybook.export.otel", __version__)
    kinds = {"internal": trace.SpanKind.INTERNAL, "client": trace.SpanKind.CLIENT}
    sampled = trace.TraceFlags(trace.TraceFlags.SAMPLED)

    def context(trace_id: int, span_id: int) -> trace.SpanContext:
        return trace.SpanContext(trace_id, span_id, is_remote=False, trace_flags=sampled)

    return [
        ReadableSpan(
            name=span.name,
            context=context(span.trace_id, span.span_id),
            parent=None if span.parent_id is None else context(span.trace_id, span.parent_id),
            resource=resource,
            attributes=dict(span.attributes),
            events=[Event(e.name, dict(e.attributes), e.time_ns) for e in span.events],
            kind=kinds[span.kind],
            status=trace.Status(trace.StatusCode.ERROR, span.error)
            if span.error is not None
            else trace.Status(trace.StatusCode.UNSET),
            start_time=span.start_ns,
            end_time=span.end_ns,
            instrumentation_scope=scope,
        )
        for span in spans
    ]


def _otlp_exporter(url: str, headers: Mapping[str, str] | None, timeout: float) -> SpanExporter:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=url, headers=dict(headers) if headers else None, timeout=timeout)


def _export(exporter: SpanExporter, spans: Sequence[ReadableSpan], where: str) -> None:
    from opentelemetry.sdk.trace.export import SpanExportResult

    with _exporter_messages() as messages:
        for start in range(0, len(spans), BATCH):
            batch = spans[start : start + BATCH]
            if exporter.export(batch) is not SpanExportResult.SUCCESS:
                why = f" ({'; '.join(dict.fromkeys([messages[0], messages[-1]]))})" if messages else ""
                msg = (
                    f"{where} did not take spans {start + 1}-{start + len(batch)} of {len(spans)}{why}; "
                    f"{start} were delivered. Check the endpoint and its headers, then send again: the ids "
                    "are the same every time, so a backend keeps one copy"
                )
                raise OtelSendError(msg)


@contextmanager
def _exporter_messages() -> Iterator[list[str]]:
    """The OTLP exporter's log lines during a send, kept to explain a failure instead of printed."""
    logger = logging.getLogger(_EXPORTER_LOGGER)
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    handler, propagate = Keep(logging.WARNING), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
