"""Issue 45: a rendered context becomes a request every provider accepts, with each repair reported.

Proven by the consumer: every request is validated against the providers' own SDK request types and
their documented pairing rules (tests/helpers/provider_checks.py cites them), on the real sessions in
the shared fixtures, on hypothesis-built trees with crashes and branches, and on resumed sessions.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings

from tests.helpers.formats import real_session, real_session_files
from tests.helpers.provider_checks import (
    anthropic_problems,
    openai_chat_problems,
    openai_responses_problems,
    provider_problems,
)
from tests.helpers.session_steps import build_session, tool_actions
from waybook import InMemoryJournal, JsonlJournal, Session, resume
from waybook.journal import SessionJournal
from waybook.model import TextBlock, ThinkingBlock, ToolCallBlock
from waybook.projections import (
    NO_RESULT_RECORDED,
    PROVIDERS,
    ContextProjection,
    TreeProjection,
    UnknownProviderError,
    context_at,
    context_refs,
    for_provider,
    provider_context,
    render_context,
    replay,
)

REAL = real_session_files()


def call(call_id: str) -> ToolCallBlock:
    return ToolCallBlock(call_id=call_id, name="bash", arguments={"cmd": "ls"})


def crashed_session() -> SessionJournal:
    """A turn whose tool ran when the process died: the call is recorded, its result never was."""
    journal = InMemoryJournal("crashed")
    session = Session.create(journal, journal_id="crashed")
    session.system("Be brief.")
    session.user("List the files.")
    session.assistant([TextBlock(text="Listing."), call("c1"), call("c2")], stop_reason="tool_use")
    session.tool_result("c1", "a.txt")
    session.user("Are you there?")
    return journal


def context(journal: SessionJournal) -> tuple:  # type: ignore[type-arg]
    state = replay(ContextProjection(), journal)
    return render_context(state.tree, state.refs, journal)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_orphaned_call_gets_a_result_saying_no_result_was_recorded(provider: str) -> None:
    journal = crashed_session()
    before = journal.head()
    shown = for_provider(context(journal), provider)  # type: ignore[arg-type]
    assert provider_problems(shown) == []
    orphaned = [r for r in shown.repairs if r.kind == "orphaned_call"]
    assert len(orphaned) == 1
    assert "'c2'" in orphaned[0].detail
    assert NO_RESULT_RECORDED in str(shown.messages)
    assert journal.head() == before  # the journal is never edited


def test_the_synthetic_result_is_an_error_result_right_after_its_call() -> None:
    shown = for_provider(context(crashed_session()), "anthropic")
    assert shown.system == "Be brief."
    _, assistant, results = shown.messages
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert results["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "a.txt"}]},
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "content": [{"type": "text", "text": NO_RESULT_RECORDED}],
            "is_error": True,
        },
    ]
    assert results["content"][2] == {"type": "text", "text": "Are you there?"}
    assert [r.kind for r in shown.repairs] == ["orphaned_call", "roles_merged"]


def test_the_rendered_context_as_recorded_is_what_the_providers_refuse() -> None:
    """The checks can fail: the context without repairs breaks the pairing rule of each provider."""
    naive_chat = [
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "Listing.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "user", "content": "Are you there?"},
    ]
    assert any("not answered" in p for p in openai_chat_problems(naive_chat))
    naive_anthropic = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "bash", "input": {}}]},
        {"role": "user", "content": "Are you there?"},
    ]
    assert any("have no tool_result" in p for p in anthropic_problems(naive_anthropic))
    naive_responses = [
        {"role": "user", "content": "List the files."},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "zz", "output": "x"},
    ]
    assert len(openai_responses_problems(naive_responses)) == 2
    assert anthropic_problems([{"role": "user", "content": [{"type": "text", "txt": "x"}]}])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_result_without_its_call_is_dropped_and_reported(provider: str) -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("hi")
    stray = session.tool_result("never-called", "out")
    session.assistant("hello")
    shown = for_provider(context(journal), provider)  # type: ignore[arg-type]
    assert provider_problems(shown) == []
    assert [(r.kind, r.source) for r in shown.repairs] == [("orphaned_result", stray.id)]
    assert "never-called" not in str(shown.messages)


def test_thinking_is_kept_where_the_provider_takes_it_back_and_dropped_elsewhere() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("hi")
    session.assistant(
        [ThinkingBlock(thinking="signed", signature="s1"), TextBlock(text="a")], model="claude-opus-4-5"
    )
    session.user("more")
    session.assistant([ThinkingBlock(thinking="theirs", signature="enc"), TextBlock(text="b")], model="gpt-5")
    session.user("and")
    session.assistant([ThinkingBlock(thinking="unsigned"), TextBlock(text="c")], model="claude-opus-4-5")
    shown = for_provider(context(journal), "anthropic")
    assert provider_problems(shown) == []
    assert shown.messages[1]["content"][0] == {"type": "thinking", "thinking": "signed", "signature": "s1"}
    assert [b["type"] for b in shown.messages[3]["content"]] == ["text"]
    assert [b["type"] for b in shown.messages[5]["content"]] == ["text"]
    assert [r.kind for r in shown.repairs] == ["thinking_dropped", "thinking_dropped"]
    for provider in ("openai-chat", "openai-responses"):
        other = for_provider(context(journal), provider)  # type: ignore[arg-type]
        assert provider_problems(other) == []
        assert [r.kind for r in other.repairs] == ["thinking_dropped"] * 3
        assert "signed" not in str(other.messages)


def test_roles_alternate_for_anthropic_and_a_leading_assistant_turn_gets_a_user_turn_first() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.assistant("I start.")
    session.user("one")
    session.user("two")
    session.system("Late rule.")
    shown = for_provider(context(journal), "anthropic")
    assert anthropic_problems(list(shown.messages)) == []
    assert [m["role"] for m in shown.messages] == ["user", "assistant", "user"]
    assert [r.kind for r in shown.repairs] == [
        "roles_merged",
        "system_as_user",
        "roles_merged",
        "leading_user_added",
    ]
    chat = for_provider(context(journal), "openai-chat")
    assert [m["role"] for m in chat.messages] == ["assistant", "user", "user", "system"]
    assert chat.repairs == ()


def test_call_ids_a_provider_refuses_are_rewritten_for_call_and_result_alike() -> None:
    journal = InMemoryJournal()
    session = Session.create(journal)
    session.user("go")
    session.assistant([call("call_1|fc_2")], stop_reason="tool_use")  # Pi's OpenAI Responses ids
    session.tool_result("call_1|fc_2", "ok")
    session.assistant([call("again")], stop_reason="tool_use")
    session.tool_result("again", "ok")
    session.assistant([call("again")], stop_reason="tool_use")  # a runtime that reuses ids
    session.tool_result("again", "ok")
    shown = for_provider(context(journal), "anthropic")
    assert provider_problems(shown) == []
    assert [r.kind for r in shown.repairs] == ["call_id_rewritten", "call_id_rewritten"]
    for provider in ("openai-chat", "openai-responses"):
        other = for_provider(context(journal), provider)  # type: ignore[arg-type]
        assert provider_problems(other) == []


def test_an_unknown_provider_is_refused_naming_the_ones_there_are() -> None:
    with pytest.raises(UnknownProviderError, match="anthropic, openai-chat, openai-responses"):
        for_provider((), "gemini")  # type: ignore[arg-type]


def test_the_same_context_gives_the_same_request_every_time() -> None:
    journal = crashed_session()
    first = for_provider(context(journal), "openai-responses")
    assert first == for_provider(context(journal), "openai-responses")


@pytest.mark.skipif(not REAL, reason="no fixtures")
@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_every_context_of_every_real_session_is_accepted_by_every_provider(path: Path) -> None:
    journal = real_session(path)
    tree = replay(TreeProjection(), journal)
    for leaf in tree.leaves():
        shown = render_context(tree, context_refs(tree, tree.position(leaf)), journal)
        for provider in PROVIDERS:
            request = for_provider(shown, provider)
            assert provider_problems(request) == [], (leaf, provider)


@settings(max_examples=150, deadline=None)
@given(tool_actions)
@example([("calls", 2), ("result", 0), ("user", "x")])  # a crash between two results
@example([("stray", None), ("calls", 1), ("calls", 1), ("result", 1)])  # streamed turn, stray result
@example([("thinking", False), ("thinking", True), ("system", "s"), ("assistant", "")])
@example([("calls", 1), ("branch", 0), ("result", 0)])  # a result on a branch without its call
def test_every_context_of_a_session_with_crashes_and_branches_is_accepted(steps: list) -> None:  # type: ignore[type-arg]
    journal = build_session(steps)
    before = journal.head()
    tree = replay(TreeProjection(), journal)
    for leaf in [*tree.leaves(), None]:
        shown = context_at(journal, tree, leaf)
        for provider in PROVIDERS:
            request = for_provider(shown, provider)
            assert provider_problems(request) == [], (provider, request.messages)
            assert request == for_provider(shown, provider)
    assert journal.head() == before


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_resumed_session_that_crashed_mid_turn_resumes_as_a_valid_request(
    tmp_path: Path, provider: str
) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path, create=True) as journal:
        crashed = crashed_session()
        journal.append([_new(r) for r in crashed.read()], expected=journal.head())
    resumed = resume(path)
    try:
        shown = resumed.for_provider(provider)  # type: ignore[arg-type]
        assert provider_problems(shown) == []
        assert shown.repairs[0].kind == "orphaned_call"
        session = resumed.session
        assert session.for_provider(provider) == shown  # type: ignore[arg-type]
        assert provider_context(resumed.journal, provider) == shown  # type: ignore[arg-type]
    finally:
        resumed.journal.close()


def _new(record):  # type: ignore[no-untyped-def]
    from waybook.model import NewRecord

    return NewRecord(id=record.id, at=record.at, body=record.body)
