"""Issue 46, "everyone sees the hole": an erased record reads as the placeholder naming its erasure's seq
and reason in paths and contexts, and a context with an erased tool call or result stays one every
provider accepts (their SDKs' request types and documented pairing rules:
tests/helpers/provider_checks.py)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.helpers.erased_sessions import (
    ANSWER,
    ASK,
    CALL,
    ERASURE,
    NEIGHBOURS,
    REASON,
    RESULT,
    SECRET,
    SPLIT_TEXTS,
    erased_session,
    placeholder,
    split_turn_session,
    tool_session,
)
from tests.helpers.provider_checks import provider_problems
from tests.helpers.session_steps import build_session, tool_actions
from waybook import InMemoryJournal
from waybook.journal import erase, verify
from waybook.model import (
    ERASED_TOOL_NAME,
    TextBlock,
    ToolCallBlock,
    erased_placeholder,
    plain_text,
)
from waybook.projections import (
    PROVIDERS,
    ContextProjection,
    TreeProjection,
    context_at,
    for_provider,
    render_context,
    render_context_from,
    replay,
    trajectory,
)


def texts(messages) -> list[str]:  # type: ignore[no-untyped-def]
    return [plain_text(m.content) for m in messages]


def test_the_placeholder_names_the_erasure_by_seq_and_its_reason_on_one_line() -> None:
    assert erased_placeholder(41, "GDPR request") == "[erased by #41: GDPR request]"
    assert erased_placeholder(41, "the user\nasked  twice") == "[erased by #41: the user asked twice]"
    assert erased_placeholder(41, None) == "[erased by #41]"


@pytest.mark.parametrize(
    ("reason", "shown"),
    [
        ("\u202egnp.exe", "[erased by #41: \\u202egnp.exe]"),  # would read "exe.png]" reversed
        ("ok\u2066x\u2069\u200f", "[erased by #41: ok\\u2066x\\u2069\\u200f]"),
        ("\x1b]0;owned\x07 GDPR", "[erased by #41: \\x1b]0;owned\\x07 GDPR]"),  # a terminal title
        ("a\x00b\x85c", "[erased by #41: a\\x00b c]"),  # NEL is whitespace: folded like the rest
    ],
)
def test_the_placeholder_shows_a_reason_s_control_and_bidirectional_characters_as_escapes(
    reason: str, shown: str
) -> None:
    """The placeholder is waybook's own text around the reason: a bidirectional override in the reason
    reordered its closing bracket and whatever follows it on the line, wherever it was shown (a page, a
    context, a search snippet)."""
    assert erased_placeholder(41, reason) == shown


def test_the_placeholder_cuts_a_long_reason_and_the_erasure_record_keeps_it_whole() -> None:
    """A 100 KB reason rode whole in every erased record's placeholder, in every context sent to a model
    (a thousand erased records: 100 MB of prompt)."""
    reason = "why " * 25_000
    shown = erased_placeholder(41, reason)
    assert shown.startswith("[erased by #41: why why")
    assert shown.endswith("…]")
    assert len(shown) <= 300
    journal = tool_session(InMemoryJournal("vault"))
    receipt = erase(journal, [CALL, RESULT], reason=reason)
    (erasure,) = list(journal.read(after=receipt.erasures[0].seq - 1))
    assert erasure.body.reason == reason  # type: ignore[union-attr]


def test_a_path_shows_each_erased_record_as_the_placeholder_and_every_other_text_as_written() -> None:
    journal = erased_session(InMemoryJournal("vault"))
    path = trajectory(journal, replay(TreeProjection(), journal))
    by_seq = {r.seq: r for r in path.records}
    assert plain_text(by_seq[CALL].body.content) == placeholder()  # type: ignore[union-attr]
    assert plain_text(by_seq[RESULT].body.content) == placeholder()  # type: ignore[union-attr]
    assert plain_text(by_seq[ASK].body.content) == NEIGHBOURS[0]  # type: ignore[union-attr]
    assert plain_text(by_seq[ANSWER].body.content) == NEIGHBOURS[1]  # type: ignore[union-attr]
    erased = by_seq[CALL].erased
    assert erased is not None
    assert erased.by == ERASURE
    assert SECRET not in repr(path)
    assert verify(journal).ok  # shown, never written: the journal is as the erasure left it


def test_an_erased_tool_result_is_a_placeholder_result_for_the_same_call() -> None:
    journal = erased_session(InMemoryJournal("vault"), [RESULT])
    messages = context_at(journal, replay(TreeProjection(), journal))
    (result,) = [m for m in messages if m.role == "tool"]
    assert result.record.body.call_id == "c1"  # type: ignore[union-attr]
    assert texts([result]) == [placeholder()]
    (call,) = [m for m in messages if m.role == "assistant" and m.record.seq == CALL]
    assert [b.call_id for b in call.content if isinstance(b, ToolCallBlock)] == ["c1"]
    for provider in PROVIDERS:
        request = for_provider(messages, provider)
        assert provider_problems(request) == [], (provider, request.messages)
        assert request.repairs == (), provider  # nothing orphaned, nothing dropped
        assert placeholder() in str(request.messages)


def test_an_erased_assistant_message_gets_back_the_calls_its_results_answer_without_arguments() -> None:
    journal = erased_session(InMemoryJournal("vault"), [CALL])
    messages = context_at(journal, replay(TreeProjection(), journal))
    (turn,) = [m for m in messages if m.record.seq == CALL]
    assert turn.content == (
        TextBlock(text=placeholder()),
        ToolCallBlock(call_id="c1", name="bash", arguments={}),
    )
    (result,) = [m for m in messages if m.role == "tool"]
    assert texts([result]) == [f"the vault holds {SECRET}"]  # the neighbour's text is kept as written
    for provider in PROVIDERS:
        request = for_provider(messages, provider)
        assert provider_problems(request) == [], (provider, request.messages)
        assert request.repairs == (), provider


def test_a_rebuilt_call_whose_result_names_no_tool_is_named_erased() -> None:
    journal = InMemoryJournal("vault")
    from waybook import Session

    session = Session.create(journal)
    session.user("go")
    session.assistant([ToolCallBlock(call_id="c9", name="secret_tool")], stop_reason="tool_use")
    session.tool_result("c9", "ok")
    erase(journal, [3], reason=REASON)
    (turn,) = [m for m in context_at(journal, replay(TreeProjection(), journal)) if m.role == "assistant"]
    assert turn.content[1] == ToolCallBlock(call_id="c9", name=ERASED_TOOL_NAME)


def test_the_context_rendered_from_records_shows_the_same_holes_as_from_the_journal() -> None:
    journal = erased_session(InMemoryJournal("vault"))
    state = replay(ContextProjection(), journal)
    from_journal = render_context(state.tree, state.refs, journal)
    from_records = render_context_from(state.tree, state.refs, list(journal.read()))
    assert from_journal == from_records
    assert texts(from_journal).count(placeholder()) == 2


def test_as_of_a_seq_before_the_erasure_record_the_hole_names_the_erasure_without_its_reason() -> None:
    journal = erased_session(InMemoryJournal("vault"))
    state = replay(ContextProjection(), journal, at=ERASURE - 1)
    records = list(journal.read(limit=ERASURE - 1))
    shown = render_context_from(state.tree, state.refs, records)
    assert erased_placeholder(ERASURE, None) in texts(shown)  # "[erased by #9]"
    assert REASON not in str(texts(shown))


@settings(max_examples=60, deadline=None)
@given(tool_actions, st.data())
@example([("calls", 2), ("result", 0), ("result", 1), ("user", "x")], None)
def test_every_context_of_a_session_with_erased_records_is_accepted_by_every_provider(
    steps: list,
    data: st.DataObject | None,  # type: ignore[type-arg]
) -> None:
    journal = build_session(steps)
    head = journal.head().seq
    if head < 2:
        return
    everything = list(range(2, head + 1))
    chosen = st.lists(st.sampled_from(everything), unique=True, min_size=1)
    seqs = everything if data is None else data.draw(chosen)
    erase(journal, sorted(seqs), reason="asked")
    assert verify(journal).ok
    tree = replay(TreeProjection(), journal)
    for leaf in [*tree.leaves(), None]:
        shown = context_at(journal, tree, leaf)
        for provider in PROVIDERS:
            request = for_provider(shown, provider)
            assert provider_problems(request) == [], (provider, request.messages)


@pytest.mark.parametrize("seqs", [[CALL], [RESULT], [CALL, RESULT]])
def test_an_erasure_never_adds_a_repair_the_session_did_not_already_need(seqs: list[int]) -> None:
    plain = tool_session(InMemoryJournal("vault"))
    erased = erased_session(InMemoryJournal("vault"), seqs)
    for provider in PROVIDERS:
        before = for_provider(context_at(plain, replay(TreeProjection(), plain)), provider)
        after = for_provider(context_at(erased, replay(TreeProjection(), erased)), provider)
        assert [r.kind for r in after.repairs] == [r.kind for r in before.repairs]
        assert len(after.messages) == len(before.messages)


@pytest.mark.parametrize("seqs", [[3], [4], [3, 4], [3, 5], [4, 6], [3, 4, 5, 6]])
def test_an_erased_call_of_a_turn_recorded_as_several_messages_keeps_every_result_paired_once(
    seqs: list[int],
) -> None:
    """Erasing the first call's message orphaned its result, which providers' repairs then dropped (a
    neighbour's text lost); erasing the second gave back both calls, so c1 was made twice (refused)."""
    journal = split_turn_session()
    erase(journal, seqs, reason=REASON)
    messages = context_at(journal, replay(TreeProjection(), journal))
    calls = [b.call_id for m in messages for b in m.content if isinstance(b, ToolCallBlock)]
    assert sorted(calls) == ["c1", "c2"]
    for provider in PROVIDERS:
        request = for_provider(messages, provider)
        assert provider_problems(request) == [], (provider, request.messages)
        assert "orphaned_result" not in [r.kind for r in request.repairs], provider
        for seq, text in SPLIT_TEXTS.items():
            assert (text in str(request.messages)) is (seq not in seqs), (provider, seq)
