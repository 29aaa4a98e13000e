"""OpenTelemetry test aids: a small coding session to map, the SDK's in-memory exporter, and an OTLP/HTTP
receiver on 127.0.0.1 that decodes what it is sent with OpenTelemetry's own protobuf types."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import attrs
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.helpers.sessions import fixed_clock
from waybook._session import Session
from waybook.export import otel
from waybook.journal import JsonlJournal, SessionJournal
from waybook.model import ToolCallBlock

MODEL = "claude-sonnet-4-5"
USAGE = {
    "input_tokens": 3,
    "cache_read_input_tokens": 1000,
    "cache_creation_input_tokens": 200,
    "output_tokens": 40,
}
SECRET = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"


def coding_session(journal: SessionJournal, *, journal_id: str = "otel-session") -> Session:
    """Two turns: a tool call that fails and one that works, answered; then a short second turn."""
    ids = (f"n{i:02d}" for i in itertools.count())
    session = Session.create(journal, journal_id=journal_id, clock=fixed_clock(), ids=lambda: next(ids))
    session.system("You are a coding agent.")
    session.user("Why do the tests fail?")
    session.assistant(
        [ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "pytest -x"})],
        stop_reason="tool_use",
        model=MODEL,
        usage=USAGE,
    )
    session.tool_result("c1", f"FAILED test_vat; env: STRIPE_KEY={SECRET}", is_error=True)
    session.assistant(
        [ToolCallBlock(call_id="c2", name="read", arguments={"path": "totals.py"})],
        stop_reason="tool_use",
        model=MODEL,
        usage={"input_tokens": 5, "output_tokens": 7},
    )
    session.tool_result("c2", "return int(net * 110) / 100")
    usage = {"input_tokens": 9, "output_tokens": 11}
    session.assistant("Truncation replaced rounding.", model=MODEL, usage=usage)
    session.user("Thanks.")
    session.assistant("You're welcome.", model=MODEL)
    return session


def write_session(path: Path, *, journal_id: str = "otel-session") -> Path:
    with JsonlJournal(path) as journal:
        coding_session(journal, journal_id=journal_id)
    return path


def exported(journals: Any, **options: Any) -> tuple[otel.SendReport, list[ReadableSpan]]:
    """Send through the SDK's InMemorySpanExporter; the report and the spans as the exporter got them."""
    exporter = InMemorySpanExporter()
    report = otel.send(journals, exporter=exporter, **options)
    return report, list(exporter.get_finished_spans())


def by_name(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


@attrs.define
class Received:
    """What the receiver was sent: each request's path, headers and decoded spans."""

    paths: list[str] = attrs.Factory(list)
    headers: list[dict[str, str]] = attrs.Factory(list)
    requests: list[ExportTraceServiceRequest] = attrs.Factory(list)
    status: int = 200

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


@contextmanager
def otlp_receiver(*, status: int = 200) -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP endpoint on 127.0.0.1 answering `status`; yields its base URL and what it received."""
    received = Received(status=status)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.paths.append(self.path)
            received.headers.append({k.lower(): v for k, v in self.headers.items()})
            if received.status == 200:
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.requests.append(request)
            self.send_response(received.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def demo_session(folder: Path) -> Path:
    """`waybook demo`'s session (a rejected fix on an abandoned branch, a memory write with its receipt)
    in `folder`/session.jsonl, its memory beside it."""
    from waybook.commands.demo import write_demo_session
    from waybook.memory import Memory

    path = folder / "session.jsonl"
    with (
        JsonlJournal.create(path, journal_id="demo-session") as journal,
        JsonlJournal(folder / "memory.jsonl") as memory,
    ):
        write_demo_session(Session(journal, actor="demo"), Memory(memory, scope="demo-agent"))
    return path
