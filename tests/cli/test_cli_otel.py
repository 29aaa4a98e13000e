"""`waybook otel send` as a user runs it: options checked first, spans sent or printed, what was sent said."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli_runner import waybook
from tests.helpers.otel import demo_session, otlp_receiver, write_session


def test_a_journal_file_is_sent_and_the_command_says_how_many_spans_in_how_many_traces(
    tmp_path: Path,
) -> None:
    path = write_session(tmp_path / "session.jsonl")
    with otlp_receiver() as (url, received):
        run = waybook("otel", "send", path, "--endpoint", url, "--header", "x-api-key=k1")
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"otel-session: sent 8 spans in 2 traces to {url}/v1/traces\n"
    assert len(received.spans()) == 8
    assert received.headers[0]["x-api-key"] == "k1"


def test_dry_run_prints_each_span_as_json_and_sends_nothing(tmp_path: Path) -> None:
    path = demo_session(tmp_path)
    run = waybook("otel", "send", path, "--dry-run", "--traces", "session")
    assert run.returncode == 0, run.stderr
    spans = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(spans) == 1 + 3 + 8 + 5  # the session, three turns, eight model calls, five tool calls
    assert len({span["trace_id"] for span in spans}) == 1
    assert "would send 17 spans in 1 trace" in run.stderr


def test_content_is_redacted_and_the_command_says_how_much_it_masked(tmp_path: Path) -> None:
    path = demo_session(tmp_path)
    run = waybook("otel", "send", path, "--dry-run", "--content", "full", "--redact-pattern", "payments/")
    assert run.returncode == 0, run.stderr
    assert "sk_test_4eC39HqLyjWDarjtT1zdp7dc" not in run.stdout
    assert "[REDACTED:stripe-key]" in run.stdout
    assert "masked" in run.stderr
    assert "custom:" in run.stderr


def test_a_store_journal_is_sent_with_its_sub_agents_and_the_report_is_json(tmp_path: Path) -> None:
    from tests.helpers.otel import coding_session
    from waybook._session import Session
    from waybook.model import ToolCallBlock
    from waybook.stores import open_store

    store = f"file:{tmp_path / 'store'}"
    with open_store(store) as opened:
        with opened.create("main") as journal:
            session = Session(journal)
            coding_session(journal, journal_id="main")
            session.sync()
            session.assistant([ToolCallBlock(call_id="t", name="Task", arguments={})], stop_reason="tool_use")
            session.link_subagent("main.helper", call_id="t")
            session.tool_result("t", "ok")
        with opened.create("main.helper") as journal:
            coding_session(journal, journal_id="main.helper")
    with otlp_receiver() as (url, received):
        run = waybook("otel", "send", "--store", store, "--endpoint", url, "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [j["journal"] for j in report["journals"]] == ["main"]  # the helper goes inside main's trace
    assert report["journals"][0]["subagents"] == ["main.helper"]
    # main: two turns, five model calls, three tool calls; the helper: its session span and the same.
    assert report["spans"] == len(received.spans()) == (2 + 5 + 3) + (1 + 2 + 4 + 2)


def test_mistakes_in_the_command_line_are_usage_errors_before_anything_is_read(tmp_path: Path) -> None:
    path = write_session(tmp_path / "session.jsonl")
    cases = [
        (("otel", "send", path), "--endpoint"),
        (("otel", "send", path, "--endpoint", "localhost:4318"), "http"),
        (("otel", "send", path, "--endpoint", "http://127.0.0.1:9", "--header", "novalue"), "NAME=VALUE"),
        (("otel", "send", path, "--dry-run", "--redact-pattern", "x"), "--content"),
        (("otel", "send", path, "--dry-run", "--since", "99"), "--since 99"),
        (("otel", "send", path, "other", "--dry-run"), "--store"),
        (("otel",), "waybook otel send"),
    ]
    for args, said in cases:
        run = waybook(*args)
        assert run.returncode == 2, (args, run.stderr)
        assert said in run.stderr, (args, run.stderr)
        assert run.stdout == ""


def test_a_backend_that_refuses_is_exit_1_with_what_to_do(tmp_path: Path) -> None:
    path = write_session(tmp_path / "session.jsonl")
    with otlp_receiver(status=401) as (url, _):
        run = waybook("otel", "send", path, "--endpoint", url)
    assert run.returncode == 1
    assert "did not take spans 1-8 of 8" in run.stderr
    assert "send again" in run.stderr


def test_a_journal_the_store_does_not_have_is_named_and_nothing_is_sent(tmp_path: Path) -> None:
    from waybook.stores import open_store

    store = f"file:{tmp_path / 'store'}"
    open_store(store).close()
    with otlp_receiver() as (url, received):
        missing = waybook("otel", "send", "--store", store, "nope", "--endpoint", url)
        empty = waybook("otel", "send", "--store", store, "--endpoint", url)
    assert missing.returncode == 1
    assert "no journal 'nope'" in missing.stderr
    assert empty.returncode == 0
    assert "no session journal to send" in empty.stderr
    assert received.requests == []
