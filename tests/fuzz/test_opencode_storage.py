"""OpenCode storage, fed structure-aware garbage, imports as valid records or is refused typed.

The seed is a session with a task tool call and its sub-agent session, and a compaction with a tail:
the garbage reaches the compaction filter, the sub-agent links and every part mapping. As for every
importer (tests/fuzz/test_importers.py): valid records every journal rule accepts, or a `JournalError`
in one line; the import command writes every journal or nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz.garbage import dumps, mutated
from waybook.formats.opencode import Stored, import_opencode
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, JournalError

FEW, MANY = 40, 1000
T = 1760000000000
TOKENS = {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}


def _assistant(mid: str, parent: str, parts: list[dict[str, Any]], **extra: Any) -> Any:
    info = {"id": mid, "role": "assistant", "parentID": parent, "time": {"created": T + 3}, "modelID": "m",
            "providerID": "p", "tokens": TOKENS, "finish": "stop", **extra}  # fmt: skip
    return info, parts


def _user(mid: str, parts: list[dict[str, Any]]) -> Any:
    return {"id": mid, "role": "user", "time": {"created": T + 1}}, parts


TASK = {"id": "prt_t", "type": "tool", "callID": "c1", "tool": "task",
        "state": {"status": "completed", "input": {"subagent_type": "explore"}, "output": "done",
                  "metadata": {"sessionId": "ses_q"}, "time": {"start": 1, "end": 2}}}  # fmt: skip
PARENT: list[Any] = [
    _user("msg_1", [{"id": "prt_1", "type": "text", "text": "hi"}]),
    _assistant("msg_2", "msg_1", [{"id": "prt_2", "type": "reasoning", "text": "hm"}, TASK]),
    _user("msg_3", [{"id": "prt_3", "type": "text", "text": "more"}]),
    _assistant("msg_4", "msg_3", [{"id": "prt_4", "type": "text", "text": "ok"}]),
    _user("msg_5", [{"id": "prt_5", "type": "compaction", "auto": True, "tail_start_id": "msg_3"}]),
    _assistant("msg_6", "msg_5", [{"id": "prt_6", "type": "text", "text": "summary"}], summary=True),
    _user("msg_7", [{"id": "prt_7", "type": "text", "text": "go on"}]),
]
CHILD: list[Any] = [
    _user("msg_q1", [{"id": "prt_q1", "type": "text", "text": "task"}]),
    _assistant("msg_q2", "msg_q1", [{"id": "prt_q2", "type": "text", "text": "done"}]),
]
SESSION = {"id": "ses_p", "time": {"created": T}}
CHILD_SESSION = {"id": "ses_q", "parentID": "ses_p", "time": {"created": T + 2}}


def _dict(value: Any) -> dict[str, Any]:
    """`value` as the storage reader hands it on: decoded from its JSON text, an object or nothing."""
    try:
        value = json.loads(dumps(value))
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


@st.composite
def stored(draw: st.DrawFn) -> Stored:
    def messages(seed: list[Any]) -> tuple[Any, ...]:
        out = []
        for info, parts in seed:
            drawn = draw(mutated(parts))
            kept = tuple(_dict(p) for p in drawn) if isinstance(drawn, list) and len(drawn) < 50 else ()
            out.append((_dict(draw(mutated(info))), kept))
        return tuple(out)

    child = Stored(session=_dict(draw(mutated(CHILD_SESSION))), messages=messages(CHILD))
    return Stored(session=_dict(draw(mutated(SESSION))), messages=messages(PARENT), children=(child,))


def _staged(records: Any) -> None:
    InMemoryJournal("fuzz").append(list(records), expected=GENESIS)


def _holds(value: Stored) -> None:
    error = None
    try:
        imported = import_opencode(value, name="n")
        for one in (imported, *imported.subagents):
            _staged(one.records)
    except JournalError as exc:
        error = str(exc)
    assert error is None or (error.strip() and "\n" not in error), "a typed error in one line"


def test_the_seed_imports_with_its_compaction_and_its_sub_agent() -> None:
    imported = import_opencode(
        Stored(session=SESSION, messages=tuple(PARENT), children=(Stored(CHILD_SESSION, tuple(CHILD)),))
    )
    _staged(imported.records)
    assert [sub.journal for sub in imported.subagents] == ["oc:ses_p.agent-ses_q"]
    assert any(r.body.KIND == "waybook.compaction/1" for r in imported.records)


@settings(max_examples=FEW)
@given(value=stored())
def test_mutated_opencode_messages_import_or_are_refused_typed(value: Stored) -> None:
    _holds(value)


@pytest.mark.slow
@settings(max_examples=MANY)
@given(value=stored())
def test_many_mutated_opencode_messages_import_or_are_refused_typed(value: Stored) -> None:
    _holds(value)


@settings(max_examples=FEW // 2)
@given(value=stored(), raw=st.sampled_from(["", "[" * 100_000, '{"a":' * 5000, "NaN", "\x00", "[]", "{"]))
def test_the_import_command_writes_every_opencode_journal_or_nothing(
    tmp_path_factory: pytest.TempPathFactory, value: Stored, raw: str
) -> None:
    from waybook.cli import main
    from waybook.journal import JsonlJournal, verify

    root = tmp_path_factory.mktemp("oc") / "storage"
    for session, seed in (
        (value.session, value.messages),
        (value.children[0].session, value.children[0].messages),
    ):
        sid = "ses_p" if session is value.session else "ses_q"
        (root / "session" / "prj").mkdir(parents=True, exist_ok=True)
        (root / "session" / "prj" / f"{sid}.json").write_text(dumps(session))
        for n, (info, parts) in enumerate(seed):
            (root / "message" / sid).mkdir(parents=True, exist_ok=True)
            (root / "message" / sid / f"msg_{sid}_{n:02d}.json").write_text(dumps(info))
            for k, part in enumerate(parts):
                (root / "part" / f"msg_{sid}_{n:02d}").mkdir(parents=True, exist_ok=True)
                (root / "part" / f"msg_{sid}_{n:02d}" / f"prt_{k:02d}.json").write_text(dumps(part))
    (root / "part" / "msg_ses_p_00").mkdir(parents=True, exist_ok=True)
    (root / "part" / "msg_ses_p_00" / "prt_zz.json").write_text(raw)
    for lenient in ([], ["--lenient"]):
        out = root.parent / f"out{len(lenient)}"
        out.mkdir()
        status = main(["import", "opencode", str(root), "-o", str(out / "s.jsonl"), *lenient])
        assert status in (0, 1, 2)
        if not lenient:
            assert status != 0, "a part file that is no JSON object is refused without --lenient"
        if status != 0:
            assert list(out.iterdir()) == [], "nothing written"
        for written in out.iterdir():
            with JsonlJournal(written, create=False, readonly=True) as journal:
                assert verify(journal).ok
