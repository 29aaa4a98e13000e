"""The Pi session codec, on a real Pi session and on hand-written version 2 and 3 files."""

from __future__ import annotations

import json

import pytest

from tests.helpers.formats import SHARED_FIXTURES, needs_shared, pi_journal
from tests.helpers.pi import HEADER_V3, answer, entry, pi_lines, user
from waybook.export.trajectories import Selection, TrajectoryExporter
from waybook.formats.pi._codec import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    PiFormatError,
    export_pi,
    import_pi,
)
from waybook.journal import InMemoryJournal, verify
from waybook.model import (
    GENESIS,
    AssistantMessage,
    Compaction,
    CustomEntry,
    LeafMoved,
    SystemMessage,
    ToolResult,
    UserMessage,
    plain_text,
)
from waybook.projections import COMPACTION_PREAMBLE, TreeProjection, context_at, replay

REAL = SHARED_FIXTURES / "pi" / "before-compaction.jsonl"
needs_real = needs_shared(REAL.is_file())


def load(data: bytes | str) -> InMemoryJournal:
    return pi_journal(import_pi(data), "pi")


# --- the real session --------------------------------------------------------------------------


@needs_real
def test_a_real_v1_session_imports_and_verifies() -> None:
    imported = import_pi(REAL.read_bytes())
    assert imported.version == 1
    journal = InMemoryJournal("pi")
    journal.append(list(imported.records), expected=GENESIS)
    assert verify(journal).ok
    kinds = [r.body for r in journal.read()]
    assert sum(isinstance(b, AssistantMessage) for b in kinds) == 484
    assert sum(isinstance(b, ToolResult) for b in kinds) == 448
    assert sum(isinstance(b, Compaction) for b in kinds) == 2
    customs = sorted({b.type for b in kinds if isinstance(b, CustomEntry)})
    assert customs == ["pi.message.bashExecution", "pi.model_change", "pi.thinking_level_change"]


@needs_real
def test_the_context_at_the_leaf_of_a_real_session_uses_the_latest_compaction() -> None:
    journal = load(REAL.read_bytes())
    raw = [json.loads(line) for line in REAL.read_text().splitlines()]
    compactions = [e for e in raw if e["type"] == "compaction"]
    tree = replay(TreeProjection(), journal)
    context = context_at(journal, tree)
    assert plain_text(context[0].content) == COMPACTION_PREAMBLE + compactions[-1]["summary"]
    first_kept = raw[compactions[-1]["firstKeptEntryIndex"]]
    assert context[1].record.at == first_kept["timestamp"]


@needs_real
def test_a_real_session_exports_to_openai_rows_whose_tool_calls_are_answered() -> None:
    journal = load(REAL.read_bytes())
    (row,) = TrajectoryExporter(journal).rows("openai", Selection("active"))
    calls = [c["id"] for m in row["messages"] for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"]
    assert sorted(answered) == sorted(calls), "every call in a training row is answered"
    assert len(calls) == 448, "454 calls, of which 6 never got a result and are dropped"


@needs_real
def test_a_real_session_exported_to_pi_v3_re_imports_to_the_same_records() -> None:
    first = import_pi(REAL.read_bytes())
    journal = InMemoryJournal("pi")
    journal.append(list(first.records), expected=GENESIS)
    exported = b"\n".join(export_pi(journal.read()))
    assert json.loads(exported.split(b"\n", 1)[0])["version"] == 3
    again = import_pi(exported)
    assert again.version == 3
    assert again.records == first.records


# --- hand-written version 2 and 3 files ------------------------------------------------------------


def test_a_v3_branch_becomes_an_explicit_leaf_move() -> None:
    data = pi_lines(
        HEADER_V3,
        user("a", None, "question"),
        answer("b", "a", "first try"),
        answer("c", "a", "second try"),
        user("d", "c", "thanks"),
    )
    journal = load(data)
    records = list(journal.read())
    moves = [r for r in records if isinstance(r.body, LeafMoved)]
    assert [(m.id, m.body.from_leaf, m.body.to_leaf) for m in moves] == [("move:c", "b", "a")]  # type: ignore[union-attr]
    tree = replay(TreeProjection(), journal)
    assert tree.children_of("a") == ("b", "c")
    assert tree.leaf_id == "d"
    assert [plain_text(m.content) for m in context_at(journal, tree)] == ["question", "second try", "thanks"]


def test_a_v2_hook_message_is_read_as_a_v3_custom_message() -> None:
    header = {**HEADER_V3, "version": 2}
    hook = entry(
        "message",
        "h",
        None,
        message={"role": "hookMessage", "customType": "ext", "content": "note", "display": True},
    )
    journal = load(pi_lines(header, hook))
    body = list(journal.read())[1].body
    assert isinstance(body, CustomEntry)
    assert body.type == "pi.message.custom"
    assert body.data["role"] == "custom"


def test_pi_labels_custom_entries_and_summaries_survive_import_and_export() -> None:
    data = pi_lines(
        HEADER_V3,
        user("a", None, "hi"),
        entry("model_change", "b", "a", provider="p", modelId="m2"),
        entry("thinking_level_change", "c", "b", thinkingLevel="high"),
        entry("label", "d", "c", targetId="a", label="start"),
        entry("custom", "e", "d", customType="my-ext", data={"k": [1, 2]}),
        entry("branch_summary", "f", "e", fromId="a", summary="we tried X"),
        entry("custom_message", "g", "f", customType="my-ext", content="injected", display=True),
        entry("session_info", "h", "g", name="my session"),
        entry(
            "message",
            "i",
            "h",
            message={"role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 0},
        ),
    )
    first = import_pi(data)
    journal = pi_journal(first, "pi")
    exported = [json.loads(line) for line in export_pi(journal.read())]
    assert [e["type"] for e in exported] == [
        "session", "message", "model_change", "thinking_level_change", "label", "custom",
        "branch_summary", "custom_message", "session_info", "message",
    ]  # fmt: skip
    assert exported[4] == entry("label", "d", "c", targetId="a", label="start")
    assert exported[5]["data"] == {"k": [1, 2]}
    assert import_pi(b"\n".join(export_pi(journal.read()))).records == first.records
    tree = replay(TreeProjection(), journal)
    shown = [plain_text(m.content) for m in context_at(journal, tree)]
    assert shown == [
        "hi",
        f"{BRANCH_SUMMARY_PREFIX}we tried X{BRANCH_SUMMARY_SUFFIX}",
        "injected",
        "Ran `ls`\n```\na.txt\n```",
    ]  # what Pi's convertToLlm sends


def test_waybook_records_pi_has_no_form_for_round_trip_through_a_wrapped_custom_entry() -> None:
    from waybook import Session

    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="native")
    session.system("Be brief.")
    session.user("hi")
    exported = list(export_pi(journal.read()))
    assert json.loads(exported[1])["customType"] == "waybook.record"
    again = load(b"\n".join(exported))
    bodies = [r.body for r in again.read()]
    assert isinstance(bodies[1], SystemMessage)
    assert isinstance(bodies[2], UserMessage)
    assert bodies[2].parent == list(again.read())[1].id


def test_lines_that_do_not_parse_are_refused_with_line_numbers() -> None:
    data = (
        pi_lines(HEADER_V3, user("a", None, "hi"))
        + "{not json\n"
        + json.dumps(answer("b", "a", "x"))
        + "\n[1]\n"
    )
    with pytest.raises(PiFormatError) as caught:
        import_pi(data)
    assert [n for n, _ in caught.value.problems] == [3, 5]
    lenient = import_pi(data, lenient=True)
    assert [n for n, _ in lenient.skipped] == [3, 5]
    assert [r.id for r in lenient.records] == ["s-3", "a", "b"]


def test_an_entry_that_cannot_be_mapped_is_refused_with_its_line() -> None:
    data = pi_lines(HEADER_V3, user("a", None, "hi"), answer("b", "a", "x", stop="exploded"))
    with pytest.raises(PiFormatError, match="line 3: unknown assistant stopReason"):
        import_pi(data)


def test_a_file_without_a_session_header_is_refused() -> None:
    with pytest.raises(PiFormatError, match="not a Pi session header"):
        import_pi(pi_lines(user("a", None, "hi")))
