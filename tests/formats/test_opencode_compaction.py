"""Issue 33: an imported OpenCode session's context is what OpenCode sends after its compactions.

OpenCode sends the model `toModelMessages(filterCompacted(messages))` (anomalyco/opencode,
packages/opencode/src/session/message-v2.ts). `filter_compacted` and `render` below transcribe those two
rules on their own, from that source, for the fixtures built here from its schema (a compaction is a
user message with a `compaction` part, answered by an assistant message with `summary: true`). Each test
imports the fixture and holds waybook's context to them. The one change waybook makes: OpenCode puts the
compaction message and its summary first, as a question and an answer; waybook shows that pair as its
compaction's summary, one user message, in the same place.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from waybook.formats.opencode import Stored, import_opencode, read_opencode
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, Compaction, ContextExclusion, ToolCallBlock
from waybook.projections import COMPACTION_PREAMBLE, TreeProjection, context_at, replay

Msg = tuple[dict[str, Any], list[dict[str, Any]]]
TOKENS = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}


# --- OpenCode's rules, transcribed ------------------------------------------------------------------


def filter_compacted(msgs: list[Msg]) -> list[Msg]:
    """filterCompacted: newest first, stop at a completed compaction (or at its tail), then reorder."""
    result: list[Msg] = []
    completed: set[str] = set()
    retain = None
    for msg in reversed(msgs):
        info, parts = msg
        result.append(msg)
        if retain:
            if info["id"] == retain:
                break
            continue
        if info["role"] == "user" and info["id"] in completed:
            part = next((p for p in parts if p["type"] == "compaction"), None)
            if part is None:
                continue
            if not part.get("tail_start_id"):
                break
            retain = part["tail_start_id"]
            if info["id"] == retain:
                break
            continue
        if (
            info["role"] == "assistant"
            and info.get("summary")
            and info.get("finish")
            and not info.get("error")
        ):
            completed.add(info["parentID"])
    result.reverse()

    def tail_part(msg: Msg) -> dict[str, Any] | None:
        return next((p for p in msg[1] if p["type"] == "compaction" and "tail_start_id" in p), None)

    marks = [i for i, m in enumerate(result) if m[0]["role"] == "user" and tail_part(m)]
    if not marks:
        return result
    ci = marks[-1]
    compaction = result[ci]
    part = tail_part(compaction)
    assert part is not None
    si = next(
        (
            i
            for i in range(ci + 1, len(result))
            if result[i][0]["role"] == "assistant"
            and result[i][0].get("summary")
            and result[i][0]["parentID"] == compaction[0]["id"]
        ),
        -1,
    )
    tail = part.get("tail_start_id")
    ti = next((i for i, m in enumerate(result) if m[0]["id"] == tail), -1) if tail else -1
    if ti >= 0 and ti < ci and si > ci:
        return result[ci : si + 1] + result[ti:ci] + result[si + 1 :]
    return result


def render(msgs: list[Msg]) -> list[tuple[str, list[str]]]:
    """toModelMessages for these fixtures: (role, texts and tool calls) per message sent."""
    out: list[tuple[str, list[str]]] = []
    for info, parts in msgs:
        if info["role"] == "user":
            texts = [p["text"] for p in parts if p["type"] == "text" and not p.get("ignored")]
            texts += ["What did we do so far?" for p in parts if p["type"] == "compaction"]
            out.append(("user", texts))
        elif not info.get("error"):
            said = [p["text"] for p in parts if p["type"] == "text"]
            said += [f"call {p['callID']}" for p in parts if p["type"] == "tool"]
            out.append(("assistant", said))
            out.extend(("tool", [p["state"]["output"]]) for p in parts if p["type"] == "tool")
    return out


def expected_context(msgs: list[Msg]) -> list[tuple[str, list[str]]]:
    """OpenCode's context, its leading compaction and summary shown as waybook's compaction summary."""
    sent = filter_compacted(msgs)
    head = sent[0]
    if any(p["type"] == "compaction" for p in head[1]) and sent != msgs:
        rest = sent[1:]
        answer = rest[0] if rest and rest[0][0].get("parentID") == head[0]["id"] else None
        if answer is not None and answer[0].get("summary") and not answer[0].get("error"):
            text = "\n\n".join(p["text"] for p in answer[1] if p["type"] == "text")
            return [("user", [COMPACTION_PREAMBLE + text]), *render(rest[1:])]
        return render([head]) + render(rest[1:] if answer is not None else rest)
    return render(sent)


# --- fixtures from OpenCode's schema -----------------------------------------------------------------

CLOCK = itertools.count(1760000001000, 1000)


def user(mid: str, text: str) -> Msg:
    info = {
        "id": mid,
        "sessionID": "ses_c",
        "role": "user",
        "time": {"created": next(CLOCK)},
        "agent": "build",
        "model": {"providerID": "p", "modelID": "m"},
    }
    return info, [{"id": f"prt_{mid}", "type": "text", "text": text}]


def assistant(mid: str, parent: str, text: str, *, tool: bool = False, **extra: Any) -> Msg:
    info = {
        "id": mid,
        "sessionID": "ses_c",
        "role": "assistant",
        "time": {"created": next(CLOCK)},
        "parentID": parent,
        "modelID": "m",
        "providerID": "p",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/w", "root": "/w"},
        "cost": 0,
        "tokens": TOKENS,
        "finish": "stop",
        **extra,
    }
    parts: list[dict[str, Any]] = [{"id": f"prt_{mid}_1", "type": "text", "text": text}]
    if tool:
        parts.append(
            {
                "id": f"prt_{mid}_2",
                "type": "tool",
                "callID": f"call_{mid}",
                "tool": "bash",
                "state": {
                    "status": "completed",
                    "input": {"command": "ls"},
                    "output": f"out {mid}",
                    "title": "ls",
                    "metadata": {},
                    "time": {"start": 1, "end": 2},
                },
            }
        )
    return info, parts


def compaction(mid: str, tail: str | None = None) -> Msg:
    info, _ = user(mid, "")
    part: dict[str, Any] = {"id": f"prt_{mid}", "type": "compaction", "auto": True}
    if tail is not None:
        part["tail_start_id"] = tail
    return info, [part]


def summary(mid: str, parent: str, text: str, **extra: Any) -> Msg:
    return assistant(mid, parent, text, summary=True, mode="compaction", agent="compaction", **extra)


def turn(n: int, *, tool: bool = False) -> list[Msg]:
    return [
        user(f"msg_{n:02d}a", f"question {n}"),
        assistant(f"msg_{n:02d}b", f"msg_{n:02d}a", f"answer {n}", tool=tool),
    ]


def write_folder(root: Path, msgs: list[Msg]) -> Path:
    storage = root / "storage"
    (storage / "session" / "prj").mkdir(parents=True)
    session = {
        "id": "ses_c",
        "projectID": "prj",
        "title": "t",
        "directory": "/w",
        "version": "1",
        "time": {"created": 1760000000000, "updated": 1760000000000},
    }
    (storage / "session" / "prj" / "ses_c.json").write_text(json.dumps(session))
    (storage / "message" / "ses_c").mkdir(parents=True)
    for info, parts in msgs:
        (storage / "message" / "ses_c" / f"{info['id']}.json").write_text(json.dumps(info))
        (storage / "part" / info["id"]).mkdir(parents=True)
        for part in parts:
            full = {**part, "sessionID": "ses_c", "messageID": info["id"]}
            (storage / "part" / info["id"] / f"{part['id']}.json").write_text(json.dumps(full))
    return storage


def write_database(path: Path, msgs: list[Msg]) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, time_created INTEGER)")
        db.execute(
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT)"
        )
        db.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT)")
        db.execute("INSERT INTO session VALUES ('ses_c', NULL, 1760000000000)")
        for info, parts in msgs:
            data = json.dumps({k: v for k, v in info.items() if k not in ("id", "sessionID")})
            db.execute(
                "INSERT INTO message VALUES (?, 'ses_c', ?, ?)", (info["id"], info["time"]["created"], data)
            )
            for part in parts:
                pdata = json.dumps({k: v for k, v in part.items() if k != "id"})
                db.execute("INSERT INTO part VALUES (?, ?, 'ses_c', ?)", (part["id"], info["id"], pdata))
    return path


def imported_context(
    tmp_path: Path, msgs: list[Msg], kind: str = "folder", *, at: str | None = None
) -> tuple[list[tuple[str, list[str]]], Any, Any]:
    source = write_folder(tmp_path, msgs) if kind == "folder" else write_database(tmp_path / "oc.db", msgs)
    imported = import_opencode(read_opencode(source, None))
    journal = InMemoryJournal("oc")
    journal.append(list(imported.records), expected=GENESIS)
    context = []
    for message in context_at(journal, replay(TreeProjection(), journal), at):
        shown = [b.text if not isinstance(b, ToolCallBlock) else f"call {b.call_id}" for b in message.content]  # type: ignore[union-attr]
        context.append((message.role, shown))
    kept = {r.id for r in journal.read()}
    assert {f"oc:{info['id']}" for info, _ in msgs} <= kept, "every OpenCode message stays in the journal"
    records = list(journal.read())
    return context, [r for r in records if isinstance(r.body, Compaction)], records


# --- the cases -----------------------------------------------------------------------------------------


def test_a_compaction_without_a_tail_leaves_its_summary_and_what_came_after(tmp_path: Path) -> None:
    msgs = [
        *turn(1, tool=True),
        *turn(2),
        compaction("msg_03c"),
        summary("msg_03s", "msg_03c", "we fixed a.py"),
        *turn(4),
    ]
    context, compactions, _ = imported_context(tmp_path, msgs)
    assert context == expected_context(msgs)
    assert context[0] == ("user", [COMPACTION_PREAMBLE + "we fixed a.py"])
    assert [c.body.first_kept for c in compactions] == [None]


@pytest.mark.parametrize("kind", ["folder", "database"])
def test_a_compaction_with_a_tail_keeps_the_tail_after_the_summary(tmp_path: Path, kind: str) -> None:
    msgs = [
        *turn(1),
        *turn(2, tool=True),
        *turn(3),
        compaction("msg_04c", tail="msg_02a"),
        summary("msg_04s", "msg_04c", "summary of 1"),
        *turn(5),
    ]
    context, compactions, everything = imported_context(tmp_path, msgs, kind)
    assert context == expected_context(msgs)
    assert [text for _, texts in context for text in texts][1:3] == ["question 2", "answer 2"]
    assert [c.body.first_kept for c in compactions] == ["oc:msg_02a"]
    records = {r.id: r.body for r in everything}
    assert [records[f"oc:{m}"].type for m in ("msg_04c", "msg_04s")] == [
        "opencode.compaction",
        "opencode.summary",
    ]
    assert not any(isinstance(body, ContextExclusion) for body in records.values()), "nothing taken back"


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param({}, id="no summary at all"),
        pytest.param({"finish": None}, id="a summary that never finished"),
        pytest.param(
            {"error": {"name": "APIError", "data": {"message": "overloaded"}}}, id="an errored summary"
        ),
    ],
)
@pytest.mark.parametrize("tail", [None, "missing"], ids=["no tail", "a tail never found"])
def test_an_incomplete_compaction_drops_nothing(
    tmp_path: Path, answer: dict[str, Any], tail: str | None
) -> None:
    msgs = [*turn(1), *turn(2), compaction("msg_03c", tail=tail)]
    if answer:
        msgs.append(summary("msg_03s", "msg_03c", "partial", **answer))
    msgs += turn(4)
    context, compactions, _ = imported_context(tmp_path, msgs)
    assert context == expected_context(msgs)
    assert context[0] == ("user", ["question 1"])
    assert compactions == []


def test_an_errored_summary_of_a_compaction_with_a_tail_still_cuts_before_the_tail(tmp_path: Path) -> None:
    """OpenCode's reorder step looks for any summary message, finished or not: the tail comes first."""
    error = {"name": "APIError", "data": {"message": "overloaded"}}
    msgs = [
        *turn(1),
        *turn(2),
        compaction("msg_03c", tail="msg_02a"),
        summary("msg_03s", "msg_03c", "", error=error),
    ]
    context, _, _ = imported_context(tmp_path, msgs)
    assert context == expected_context(msgs)
    assert context == [
        ("user", ["What did we do so far?"]),
        ("user", ["question 2"]),
        ("assistant", ["answer 2"]),
    ]


@pytest.mark.parametrize(
    "tail", [None, "msg_04a", "msg_01a"], ids=["no tail", "a tail", "a tail past the first"]
)
def test_after_two_compactions_the_newest_one_counts(tmp_path: Path, tail: str | None) -> None:
    msgs = [
        *turn(1),
        compaction("msg_02c"),
        summary("msg_02s", "msg_02c", "first summary"),
        *turn(3),
        *turn(4, tool=True),
        compaction("msg_05c", tail=tail),
        summary("msg_05s", "msg_05c", "second summary"),
        *turn(6),
    ]
    context, compactions, _ = imported_context(tmp_path, msgs, at=None)
    assert context == expected_context(msgs)
    assert context[0] == ("user", [COMPACTION_PREAMBLE + "second summary"])
    if tail == "msg_01a":  # the second tail shows the first compaction's messages: they stay messages
        assert len(compactions) == 1
        return
    assert len(compactions) == 2
    before_second, _, _ = imported_context(tmp_path / "again", msgs, at="oc:prt_msg_04b_2")
    assert before_second == expected_context(msgs[:8]), "the context then was OpenCode's then"
    assert before_second[0] == ("user", [COMPACTION_PREAMBLE + "first summary"])


def test_a_newer_compaction_without_a_summary_leaves_the_older_tail_and_pair_in_place(tmp_path: Path) -> None:
    """OpenCode's reorder step looks at the newest compaction naming a tail; with no summary after it,
    nothing is reordered: the context is the older compaction's tail onward, its pair where it was."""
    msgs = [*turn(1), *turn(2), compaction("msg_03c", tail="msg_02a"), summary("msg_03s", "msg_03c", "first"),
            *turn(4), compaction("msg_05c", tail="msg_04a"), *turn(6)]  # fmt: skip
    context, compactions, records = imported_context(tmp_path, msgs)
    assert context == expected_context(msgs)
    assert context[:4] == [("user", ["question 2"]), ("assistant", ["answer 2"]),
                           ("user", ["What did we do so far?"]), ("assistant", ["first"])]  # fmt: skip
    assert compactions == []
    excluded = [r.body.target for r in records if isinstance(r.body, ContextExclusion)]
    assert excluded == ["oc:msg_01a", "oc:msg_01b"]


def test_a_plain_cut_after_an_earlier_compaction_does_not_bring_its_summary_back(tmp_path: Path) -> None:
    """The newest compaction names a tail that is not there and its summary errored: OpenCode's walk goes
    on to the completed compaction before it, back to that one's tail, and sends the messages from there
    as they are (no reorder: the newest compaction's tail is missing). The oldest summary is not sent."""
    error = {"name": "APIError", "data": {"message": "overloaded"}}
    msgs = [*turn(1), compaction("msg_02c"), summary("msg_02s", "msg_02c", "first summary"), *turn(3),
            compaction("msg_04c", tail="msg_03a"), summary("msg_04s", "msg_04c", "second summary"),
            compaction("msg_05c", tail="msg_x"), summary("msg_05s", "msg_05c", "", error=error)]  # fmt: skip
    context, compactions, _ = imported_context(tmp_path, msgs)
    assert context == expected_context(msgs)
    assert context == [("user", ["question 3"]), ("assistant", ["answer 3"]),
                       ("user", ["What did we do so far?"]), ("assistant", ["second summary"]),
                       ("user", ["What did we do so far?"])]  # fmt: skip
    assert compactions == []


Step = tuple[str, ...] | tuple[str, str | int | None, str]


def session_of(steps: list[Step]) -> list[Msg]:
    """The messages of `steps`, as OpenCode writes them. `("turn",)` or `("tool",)`: a user message and
    its answer. `("compact", tail, outcome)`: a compaction whose tail is None, `"missing"` (a message that
    is not there), `"self"` (the compaction itself) or the n-th user message so far (compactions count),
    then its summary: `"done"`, `"error"`, `"unfinished"` or `"none"` (no summary). Ids ascend: msg_001,
    msg_002, ..."""
    msgs: list[Msg] = []
    count = itertools.count(1)
    error = {"name": "APIError", "data": {"message": "overloaded"}}
    for step in steps:
        if step[0] != "compact":
            u, a = f"msg_{next(count):03d}", f"msg_{next(count):03d}"
            msgs += [user(u, f"q {u}"), assistant(a, u, f"a {a}", tool=step[0] == "tool")]
            continue
        _, tail, outcome = step
        c = f"msg_{next(count):03d}"
        users = [info["id"] for info, _ in msgs if info["role"] == "user"]
        named = {None: None, "missing": "msg_999", "self": c}
        msgs.append(compaction(c, tail=named[tail] if not isinstance(tail, int) else users[tail]))
        if outcome != "none":
            extra = {"done": {}, "error": {"error": error}, "unfinished": {"finish": None}}[outcome]
            mid = f"msg_{next(count):03d}"
            msgs.append(summary(mid, c, f"summary {mid}", **extra))
    return msgs


@st.composite
def sessions(draw: st.DrawFn) -> list[Msg]:
    """Turns and compactions as OpenCode writes them: a summary, if any, right after its compaction,
    and a tail naming an earlier user message, the compaction itself, or a message that is not there."""
    steps: list[Step] = []
    users = 0
    for kind in draw(st.lists(st.sampled_from(["turn", "tool", "compact"]), min_size=1, max_size=10)):
        if kind != "compact":
            steps.append((kind,))
            users += 1
            continue
        tail = draw(st.sampled_from([None, "missing", "self", *range(users)]))
        outcome = draw(st.sampled_from(["done", "done", "error", "unfinished", "none"]))
        steps.append(("compact", tail, outcome))
        users += 1  # a compaction is a user message too: a later tail may name it
    return session_of(steps)


AN_EARLIER_SUMMARY_BEFORE_A_PLAIN_CUT: Final[list[Step]] = [
    ("turn",), ("turn",), ("turn",), ("compact", None, "done"), ("turn",), ("compact", 4, "done"),
    ("compact", "missing", "error"),
]  # fmt: skip
"""Found by hypothesis (issue 44): the newest compaction names a missing tail and its summary errored, so
OpenCode's walk stops at the older compaction's tail and sends that suffix as it is; the oldest
compaction's summary is not sent."""


@settings(max_examples=150, deadline=None)
@given(msgs=sessions())
@example(msgs=session_of(AN_EARLIER_SUMMARY_BEFORE_A_PLAIN_CUT))
def test_any_run_of_turns_and_compactions_gives_opencodes_context(msgs: list[Msg]) -> None:
    stored = Stored(session={"id": "ses_c"}, messages=tuple((info, tuple(parts)) for info, parts in msgs))
    journal = InMemoryJournal("oc")
    journal.append(list(import_opencode(stored).records), expected=GENESIS)
    context = [
        (m.role, [b.text if not isinstance(b, ToolCallBlock) else f"call {b.call_id}" for b in m.content])  # type: ignore[union-attr]
        for m in context_at(journal, replay(TreeProjection(), journal))
    ]
    assert context == expected_context(msgs)
