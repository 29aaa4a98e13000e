"""Context accounting by request-context revision: a count stays valid through appends and not through
a change of the request's plan, a compaction, an exclusion or a new pinned memory."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from waybook import InMemoryJournal, Session, ToolOutcome
from waybook.model import AssistantMessage, Compaction, MemoryUsed, ToolCallBlock, UnknownNodeError
from waybook.projections import ContextUsage, RequestContext, context_usage, usage_tokens

TOOLS = [{"name": "bash", "description": "run a command", "parameters": {"type": "object"}}]
PLAN = RequestContext(
    model="m-1", system="Be brief.", tools=TOOLS, activation={"skills": ["csv"]}, memory="ab" * 32
)


def measured_session() -> tuple[Session, str]:
    session = Session.create(InMemoryJournal("usage"), journal_id="usage")
    session.append(MemoryUsed(memory="mem", seq=3, digest="cd" * 32, index_sha256="ab" * 32))
    ask = session.user("How many rows are in data.csv?")
    call = ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": "wc -l data.csv"})
    session.turn([call], [ToolOutcome("c1", "3 data.csv")], usage={"input": 900, "output": 40}, request=PLAN)
    return session, ask.id


def usage_of(session: Session, plan: RequestContext | None = None, leaf: str | None = None) -> ContextUsage:
    return context_usage(session.journal.read(), leaf, plan=plan)


def test_the_turn_records_the_revision_of_the_request_its_usage_measured() -> None:
    session, ask = measured_session()
    message = next(r for r in session.journal.read() if isinstance(r.body, AssistantMessage))
    request = message.body.details["request"]  # type: ignore[index]
    assert request["revision"] == PLAN.revision(ask)  # the transcript position: the node it was built at
    assert request["transcript"] == ask
    assert request["parts"]["model"] == "m-1"
    assert len(request["parts"]["tools"]) == 64  # a digest of the part, not the part
    usage = usage_of(session, PLAN)
    assert (usage.tokens, usage.valid, usage.revision) == (940, True, PLAN.revision(ask))


def test_a_transcript_append_keeps_the_count_valid() -> None:
    session, _ = measured_session()
    measured = usage_of(session, PLAN)
    question = session.user("And in data2.csv?")
    note = session.custom("ext.note", {"k": 1})
    usage = usage_of(session, PLAN)
    assert usage.valid
    assert (usage.tokens, usage.revision, usage.measured_at) == (940, measured.revision, measured.measured_at)
    # the nodes to estimate on top of the count: the turn's tool result came after its usage, then these
    assert usage.appended[1:] == (question.id, note.id)


@pytest.mark.parametrize(
    ("change", "part"),
    [
        (
            RequestContext(
                model="m-1",
                system="Be brief.",
                tools=[*TOOLS, {"name": "read"}],
                activation={"skills": ["csv"]},
                memory="ab" * 32,
            ),
            "tools",
        ),
        (
            RequestContext(
                model="m-1",
                system="Be verbose.",
                tools=TOOLS,
                activation={"skills": ["csv"]},
                memory="ab" * 32,
            ),
            "system",
        ),
        (
            RequestContext(
                model="m-2", system="Be brief.", tools=TOOLS, activation={"skills": ["csv"]}, memory="ab" * 32
            ),
            "model",
        ),
        (
            RequestContext(
                model="m-1", system="Be brief.", tools=TOOLS, activation={"skills": []}, memory="ab" * 32
            ),
            "activation",
        ),
        (
            RequestContext(
                model="m-1",
                system="Be brief.",
                tools=TOOLS,
                operations=["web"],
                activation={"skills": ["csv"]},
                memory="ab" * 32,
            ),
            "operations",
        ),
        (
            RequestContext(
                model="m-1", system="Be brief.", tools=TOOLS, activation={"skills": ["csv"]}, memory="ef" * 32
            ),
            "memory",
        ),
    ],
    ids=["tools", "prompt", "model", "activation", "operations", "memory"],
)
def test_a_change_of_the_request_plan_invalidates_the_count(change: RequestContext, part: str) -> None:
    session, _ = measured_session()
    session.user("Go on.")
    usage = usage_of(session, change)
    assert not usage.valid
    assert f"request's {part} changed" in usage.reason
    assert usage.tokens == 940  # the stale count is still shown, for the record


def test_a_new_pinned_memory_invalidates_the_count() -> None:
    session, _ = measured_session()
    session.append(MemoryUsed(memory="mem", seq=4, digest="ee" * 32, index_sha256="ff" * 32))
    usage = usage_of(session)
    assert not usage.valid
    assert "pinned memory changed" in usage.reason


def test_an_exclusion_on_the_path_invalidates_the_count() -> None:
    session, ask = measured_session()
    session.exclude(ask, reason="off topic")
    assert "excluded" in usage_of(session).reason


def test_a_compaction_records_the_revision_it_summarized_and_keeps_the_pinned_memory() -> None:
    session, _ = measured_session()
    before = usage_of(session, PLAN)
    compaction = session.compact("Counted the rows of data.csv.", first_kept=None)
    assert isinstance(compaction.body, Compaction)
    assert compaction.body.details == {"summarized_revision": before.revision}
    after = usage_of(session, PLAN)
    assert not after.valid
    assert "compacted" in after.reason
    assert after.memory == before.memory == "ab" * 32  # the pinned memory index is unchanged
    assert not any(isinstance(r.body, MemoryUsed) for r in session.journal.read(after=compaction.seq - 1))
    # the next measured request, with the same plan (the same memory), makes the count valid again
    session.assistant("There are 2 rows.", usage={"input": 120, "output": 10}, request=PLAN)
    again = usage_of(session, PLAN)
    assert (again.tokens, again.valid) == (130, True)
    assert again.revision == PLAN.revision(compaction.id)


def test_a_leaf_on_another_branch_reads_its_own_measurement() -> None:
    session, ask = measured_session()
    session.branch_from(ask, reason="retry")
    usage = usage_of(session)
    assert (usage.tokens, usage.valid) == (None, False)
    assert "no usage" in usage.reason


def test_a_usage_recorded_without_its_request_context_is_not_trusted() -> None:
    session = Session.create(InMemoryJournal("old"), journal_id="old")
    session.user("hi")
    session.assistant("hello", usage={"input": 10, "output": 2})
    usage = usage_of(session)
    assert (usage.tokens, usage.valid, usage.revision) == (12, False, None)


def test_an_assistant_message_without_a_request_writes_the_same_bytes_as_before() -> None:
    session = Session.create(InMemoryJournal("old"), journal_id="old")
    record = session.assistant("hello", usage={"input": 10})
    assert record.body.details is None
    assert b'"details"' not in list(session.journal.read_lines())[-1]


def test_the_revision_is_a_fixed_function_of_the_plan_and_position() -> None:
    plan = RequestContext(model="m-1", system="Be brief.", tools=TOOLS)
    assert plan.revision("u1") == RequestContext(model="m-1", system="Be brief.", tools=TOOLS).revision("u1")
    assert plan.revision("u1") != plan.revision("u2")
    # frozen: a stored revision must mean the same plan in every later release
    assert plan.revision("u1") == "d05b77799d5b5a3a027dea90afd0fd718f0149018fce035d7967d1b3e73f7612"


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        ({"input": 10, "output": 2}, 12),
        ({"input": 10, "output": 2, "cache_read": 100, "cache_write": 5}, 117),
        ({"input": 10, "output": 2, "totalTokens": 200}, 200),
        ({"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 7}, 20),
        ({}, None),
        (None, None),
    ],
)
def test_usage_tokens_counts_a_usage_observation(usage: dict[str, int] | None, tokens: int | None) -> None:
    assert usage_tokens(usage) == tokens


@given(st.lists(st.sampled_from(["user", "assistant", "custom", "system"]), max_size=8))
def test_any_run_of_appends_keeps_the_count_valid(appends: list[str]) -> None:
    session, _ = measured_session()
    for kind in appends:
        if kind == "user":
            session.user("more")
        elif kind == "assistant":
            session.assistant("ok")  # no usage: not a measurement
        elif kind == "custom":
            session.custom("ext.x", None)
        else:
            session.system("note")
    usage = usage_of(session, PLAN)
    assert usage.valid
    assert len(usage.appended) == 1 + len(appends)  # the tool result, then each append


def test_a_leaf_that_is_not_a_node_is_a_typed_error() -> None:
    session, _ = measured_session()
    with pytest.raises(UnknownNodeError, match="not a node"):
        context_usage(session.journal.read(), "nope")
