"""Issue 46 in OpenTelemetry traces: with full content, an erased record's messages carry the placeholder
naming its erasure, never its old text, and an erased call's tool span keeps its call id and tool name."""

from __future__ import annotations

import json

from tests.helpers.erased_sessions import SECRET, erased_session, placeholder
from waybook.export import otel
from waybook.export._otel_types import OtelOptions
from waybook.journal import InMemoryJournal


def test_full_content_spans_show_the_placeholder_and_keep_the_tool_span() -> None:
    journal = erased_session(InMemoryJournal("vault"))
    (spans,) = otel.spans_of(journal, options=OtelOptions(content="full"))
    dumped = json.dumps([repr(span) for span in spans.spans], ensure_ascii=False)
    assert SECRET not in dumped
    assert placeholder() in dumped
    tools = [s for s in spans.spans if s.name.startswith("execute_tool")]
    assert [s.name for s in tools] == ["execute_tool bash"]
