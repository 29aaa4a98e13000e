"""Sending spans over OTLP/HTTP, checked by a receiver on 127.0.0.1 that decodes OpenTelemetry's protobuf."""

from __future__ import annotations

import pytest

from tests.helpers.otel import coding_session, otlp_receiver
from waybook.export import otel
from waybook.journal import InMemoryJournal


def _session() -> InMemoryJournal:
    journal = InMemoryJournal("otel-session")
    coding_session(journal)
    return journal


def test_spans_go_to_the_traces_path_as_otlp_protobuf_with_the_headers_given() -> None:
    with otlp_receiver() as (url, received):
        report = otel.send(
            _session(), endpoint=url, headers={"Authorization": "Bearer abc"}, service_name="agents"
        )
    assert received.paths == ["/v1/traces"]
    assert received.headers[0]["authorization"] == "Bearer abc"
    assert received.headers[0]["content-type"] == "application/x-protobuf"
    spans = received.spans()
    assert len(spans) == report.spans == 8
    assert {span.name for span in spans} >= {"chat claude-sonnet-4-5", "execute_tool bash"}
    resource = received.requests[0].resource_spans[0].resource
    assert {a.key: a.value.string_value for a in resource.attributes}["service.name"] == "agents"


def test_an_endpoint_with_a_path_is_used_as_given() -> None:
    with otlp_receiver() as (url, received):
        otel.send(_session(), endpoint=f"{url}/api/public/otel/v1/traces")
    assert received.paths == ["/api/public/otel/v1/traces"]


def test_a_backend_that_refuses_the_spans_is_a_typed_error_that_says_how_many_were_delivered() -> None:
    with otlp_receiver(status=400) as (url, _), pytest.raises(otel.OtelSendError) as refused:
        otel.send(_session(), endpoint=url)
    assert f"{url}/v1/traces did not take spans 1-8 of 8" in str(refused.value)
    assert "0 were delivered" in str(refused.value)


def test_an_endpoint_nobody_listens_on_is_a_typed_error_after_the_timeout() -> None:
    with otlp_receiver() as (url, _):
        pass  # the port is closed again
    with pytest.raises(otel.OtelSendError, match="send again"):
        otel.send(_session(), endpoint=url, timeout=0.5)


def test_sending_twice_sends_the_same_ids() -> None:
    with otlp_receiver() as (url, received):
        journal = _session()  # one journal: its sealed records' salts are its own (docs/erasure.md)
        otel.send(journal, endpoint=url)
        otel.send(journal, endpoint=url)
    first, second = received.requests
    ids = [
        [(s.trace_id, s.span_id) for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]
        for r in (first, second)
    ]
    assert ids[0] == ids[1]
