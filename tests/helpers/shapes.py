"""Sessions of a chosen tree shape, and a count of the work a call does (issue 50, linear in the shape).

`deep_branchy(levels)`: each level a user question, an answer, a leaf move back to the question and a
second answer; the next level's question goes under the second answer. Every level leaves a branch,
and the tree is as deep as the session is long: what a per-branch or per-leaf-move walk of the path
makes quadratic. `linear(levels)`: the same number of records as one straight path.

`calls_made(fn)` counts every Python and C function call `fn` makes (a profile hook, not a clock):
the same code on the same records always makes the same calls, so the ratio of two counts is the
growth of the work, measured without timing anything. A walk of a path, a copy per branch, a sort per
leaf each make calls per step, so a quadratic spot shows as a ratio near 16 where 4x the records
should give about 4.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal
from waybook.model import (
    AssistantMessage,
    Header,
    LeafMoved,
    NewRecord,
    Record,
    ToolCallBlock,
    ToolResult,
    UserMessage,
    text,
)

_START = datetime(2026, 12, 1, 9, 0, 0)


def _at(i: int) -> str:
    return (_START + timedelta(seconds=i * 7 % 3600 + i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _answer(i: int, parent: str, *, call: bool = False) -> AssistantMessage:
    content: tuple[Any, ...] = text(f"answer {i}")
    if call:
        content = (*content, ToolCallBlock(call_id=f"c{i}", name=f"tool{i % 3}", arguments={"n": i}))
    usage = {"input_tokens": 100 + i % 17, "output_tokens": 5 + i % 7}
    return AssistantMessage(
        parent=parent, content=content, stop_reason="end_turn", model=f"m-{i % 2}", usage=usage
    )


def deep_branchy_records(levels: int, *, tools: bool = False) -> Iterator[NewRecord]:
    """A header, then `levels` levels of question, answer, move back, second answer (4 records each).

    `tools`: the second answer of every third level calls a tool and its result follows it.
    """
    yield NewRecord(id="h", at=_at(0), body=Header(journal="deep", creator="tests"))
    parent: str | None = None
    for level in range(levels):
        q, a1, mv, a2 = (f"l{level}{part}" for part in ("q", "a", "m", "b"))
        i = 4 * level
        asked = UserMessage(parent=parent, content=text(f"question {level}"))
        yield NewRecord(id=q, at=_at(i + 1), body=asked)
        yield NewRecord(id=a1, at=_at(i + 2), body=_answer(i + 2, q))
        yield NewRecord(id=mv, at=_at(i + 3), body=LeafMoved(from_leaf=a1, to_leaf=q, reason="try again"))
        call = tools and level % 3 == 0
        yield NewRecord(id=a2, at=_at(i + 4), body=_answer(i + 4, q, call=call))
        parent = a2
        if call:
            result = f"l{level}r"
            body = ToolResult(parent=a2, call_id=f"c{i + 4}", content=text("ok"), tool_name=f"tool{i % 3}")
            yield NewRecord(id=result, at=_at(i + 4), body=body)
            parent = result


def linear_records(levels: int) -> Iterator[NewRecord]:
    """A header, then 4 * `levels` user and assistant turns alternating on one path."""
    yield NewRecord(id="h", at=_at(0), body=Header(journal="linear", creator="tests"))
    parent: str | None = None
    for i in range(1, 4 * levels + 1):
        rid = f"n{i}"
        body: Any = _answer(i, parent or "")
        if i % 2:
            body = UserMessage(parent=parent, content=text(f"question {i}"))
        yield NewRecord(id=rid, at=_at(i), body=body)
        parent = rid


def write(records: Iterator[NewRecord], journal: SessionJournal | None = None) -> SessionJournal:
    """`records` appended to `journal` (a new in-memory one by default), a thousand at a time."""
    journal = journal if journal is not None else InMemoryJournal()
    batch: list[NewRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) == 1000:
            journal.append(batch, expected=journal.head())
            batch = []
    if batch:
        journal.append(batch, expected=journal.head())
    return journal


def write_file(path: Path, records: Iterator[NewRecord]) -> Path:
    """`records` as a JSONL journal file at `path`."""
    with JsonlJournal(path, durability="none") as journal:
        write(records, journal)
    return path


def committed(records: Iterator[NewRecord]) -> list[Record]:
    """`records` as committed records (seq, prev and digest), read back from an in-memory journal."""
    return list(write(records).read())


def calls_made(fn: Callable[[], object]) -> int:
    """How many Python and C function calls `fn()` makes (a generator's every resumption counts)."""
    count = 0

    def hook(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(previous)
    return count


def growth(make: Callable[[int], Callable[[], object]], small: int = 1000, large: int = 4000) -> float:
    """calls_made at `large` levels / at `small` levels, for `make(levels)` giving the call to count.

    The shapes are built by `make` before counting, so only the call's own work is counted.
    """
    run_small, run_large = make(small), make(large)
    return calls_made(run_large) / calls_made(run_small)


def opencode_parent_of(children: int) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """An OpenCode parent session whose one assistant message starts `children` sub-agent sessions by
    task calls: its sessions by id and its messages by session (what `_storage._tree` reads)."""
    sessions = {"ses_p": {"id": "ses_p", "title": "parent"}}
    sessions |= {f"ses_{i:05d}": {"id": f"ses_{i:05d}", "parentID": "ses_p"} for i in range(children)}
    calls = [
        {
            "id": f"prt_{i}",
            "type": "tool",
            "callID": f"call_{i}",
            "tool": "task",
            "state": {
                "status": "completed",
                "input": {"subagent_type": "general"},
                "metadata": {"sessionId": f"ses_{i:05d}"},
                "output": "done",
            },
        }
        for i in range(children)
    ]
    info = {
        "id": "msg_1",
        "sessionID": "ses_p",
        "role": "assistant",
        "time": {"created": 1},
        "parentID": "msg_0",
        "modelID": "m",
        "providerID": "p",
        "finish": "stop",
    }
    user = {"id": "msg_0", "sessionID": "ses_p", "role": "user", "time": {"created": 0}}
    messages = {"ses_p": ((user, ({"id": "prt_u", "type": "text", "text": "go"},)), (info, tuple(calls)))}
    return sessions, messages
