"""Issue 33: an OpenCode session's sub-agent sessions import as journals of their own, linked.

OpenCode's task tool (anomalyco/opencode, packages/opencode/src/tool/task.ts) creates a child session
with `parentID` set to the calling session and records the child's id in its tool part's
`state.metadata.sessionId` (and the output's `task_id: ...`). The fixtures are built from that source and
from the storage schemas (session/session.sql.ts: the `parent_id` column).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import waybook
from waybook.formats.opencode import OpenCodeStorageError, Stored, import_opencode, read_opencode
from waybook.journal import JsonlJournal
from waybook.model import SubagentLink
from waybook.projections import TreeProjection, context_at, replay

TOKENS = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}
PARENT = {
    "id": "ses_p",
    "projectID": "prj",
    "title": "main",
    "directory": "/w",
    "version": "1",
    "time": {"created": 1760000000000, "updated": 1760000000000},
}
CHILD = {
    "id": "ses_q",
    "projectID": "prj",
    "parentID": "ses_p",
    "title": "look around (@explore subagent)",
    "directory": "/w",
    "version": "1",
    "time": {"created": 1760000002500, "updated": 1760000003000},
}


def user(sid: str, mid: str, at: int, text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    info = {
        "id": mid,
        "sessionID": sid,
        "role": "user",
        "time": {"created": at},
        "agent": "build",
        "model": {"providerID": "p", "modelID": "m"},
    }
    return info, [{"id": f"prt_{mid}", "type": "text", "text": text}]


def assistant(sid: str, mid: str, parent: str, at: int, parts: list[dict[str, Any]]) -> Any:
    info = {
        "id": mid,
        "sessionID": sid,
        "role": "assistant",
        "time": {"created": at},
        "parentID": parent,
        "modelID": "m",
        "providerID": "p",
        "mode": "build",
        "agent": "build",
        "cost": 0,
        "path": {"cwd": "/w", "root": "/w"},
        "tokens": TOKENS,
        "finish": "stop",
    }
    return info, parts


TASK = {
    "id": "prt_task",
    "type": "tool",
    "callID": "call_task",
    "tool": "task",
    "state": {
        "status": "completed",
        "title": "look around",
        "input": {"description": "look around", "prompt": "list the files", "subagent_type": "explore"},
        "output": "task_id: ses_q (for resuming to continue this task if needed)\n\n<task_result>\n"
        "a.py\n</task_result>",
        "metadata": {"sessionId": "ses_q", "model": {"modelID": "m", "providerID": "p"}},
        "time": {"start": 1760000002400, "end": 1760000003500},
    },
}
SESSIONS: dict[str, tuple[dict[str, Any], list[Any]]] = {
    "ses_p": (
        PARENT,
        [
            user("ses_p", "msg_p1", 1760000001000, "what is in the repo?"),
            assistant("ses_p", "msg_p2", "msg_p1", 1760000002000, [TASK]),
            assistant(
                "ses_p", "msg_p3", "msg_p1", 1760000004000, [{"id": "prt_p3", "type": "text", "text": "a.py"}]
            ),
        ],
    ),
    "ses_q": (
        CHILD,
        [
            user("ses_q", "msg_q1", 1760000002600, "list the files"),
            assistant(
                "ses_q", "msg_q2", "msg_q1", 1760000002900, [{"id": "prt_q2", "type": "text", "text": "a.py"}]
            ),
        ],
    ),
}


def folder(root: Path) -> Path:
    storage = root / "storage"
    for sid, (session, msgs) in SESSIONS.items():
        (storage / "session" / "prj").mkdir(parents=True, exist_ok=True)
        (storage / "session" / "prj" / f"{sid}.json").write_text(json.dumps(session))
        (storage / "message" / sid).mkdir(parents=True)
        for info, parts in msgs:
            (storage / "message" / sid / f"{info['id']}.json").write_text(json.dumps(info))
            (storage / "part" / info["id"]).mkdir(parents=True)
            for part in parts:
                full = {**part, "sessionID": sid, "messageID": info["id"]}
                (storage / "part" / info["id"] / f"{part['id']}.json").write_text(json.dumps(full))
    return storage


def database(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, "
            "directory TEXT, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER)"
        )
        db.execute(
            "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, "
            "time_updated INTEGER, data TEXT)"
        )
        db.execute(
            "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, "
            "time_created INTEGER, time_updated INTEGER, data TEXT)"
        )
        for sid, (session, msgs) in SESSIONS.items():
            db.execute(
                "INSERT INTO session VALUES (?, 'prj', ?, 's', '/w', ?, '1', ?, 0)",
                (sid, session.get("parentID"), session["title"], session["time"]["created"]),
            )
            for info, parts in msgs:
                data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
                db.execute(
                    "INSERT INTO message VALUES (?, ?, ?, 0, ?)",
                    (info["id"], sid, info["time"]["created"], json.dumps(data)),
                )
                for part in parts:
                    pdata = {k: v for k, v in part.items() if k != "id"}
                    db.execute(
                        "INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)",
                        (part["id"], info["id"], sid, json.dumps(pdata)),
                    )
    return path


def storage(tmp_path: Path, kind: str) -> Path:
    return folder(tmp_path / "src") if kind == "folder" else database(tmp_path / "opencode.db")


def texts(path: Path) -> list[tuple[str, str]]:
    with JsonlJournal(path, create=False, readonly=True) as journal:
        context = context_at(journal, replay(TreeProjection(), journal))
        return [(m.role, getattr(b, "text", getattr(b, "name", ""))) for m in context for b in m.content]


@pytest.mark.parametrize("kind", ["folder", "database"])
def test_a_parent_with_one_sub_agent_session_imports_as_two_linked_journals(
    tmp_path: Path, kind: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    run = waybook("import", "opencode", storage(tmp_path, kind), "-o", out / "main.jsonl", "--json")
    assert run.returncode == 0, run.stdout
    report = json.loads(run.stdout)
    assert [j["journal"] for j in report["journals"]] == [
        str(out / "main.jsonl"),
        str(out / "main.agent-ses_q.jsonl"),
    ]
    assert sorted(p.name for p in out.iterdir()) == ["main.agent-ses_q.jsonl", "main.jsonl"]
    for name in ("main.jsonl", "main.agent-ses_q.jsonl"):
        assert waybook("verify", out / name).returncode == 0
    with JsonlJournal(out / "main.jsonl", create=False, readonly=True) as journal:
        links = [r.body for r in journal.read() if isinstance(r.body, SubagentLink)]
    assert [(k.node, k.journal, k.call_id, k.agent) for k in links] == [
        ("oc:msg_p2", "main.agent-ses_q", "call_task", "explore")
    ]
    assert texts(out / "main.agent-ses_q.jsonl") == [("user", "list the files"), ("assistant", "a.py")]
    assert ("assistant", "task") in texts(out / "main.jsonl")  # the parent's context is its own


@pytest.mark.parametrize("kind", ["folder", "database"])
def test_a_sub_agent_session_imports_alone(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "child.jsonl"
    run = waybook("import", "opencode", storage(tmp_path, kind), "--session", "ses_q", "-o", out, "--json")
    assert run.returncode == 0, run.stdout
    assert len(json.loads(run.stdout)["journals"]) == 1
    assert texts(out) == [("user", "list the files"), ("assistant", "a.py")]


def test_a_sub_agent_session_no_tool_call_names_hangs_from_the_message_before_it(tmp_path: Path) -> None:
    stored = read_opencode(folder(tmp_path), None)
    task = stored.messages[1][1][0]
    untold = {**task, "state": {**task["state"], "metadata": {}, "input": {"prompt": "list the files"}}}
    messages = (stored.messages[0], (stored.messages[1][0], (untold,)), stored.messages[2])
    imported = import_opencode(
        type(stored)(session=stored.session, messages=messages, children=stored.children)
    )
    links = [r.body for r in imported.records if isinstance(r.body, SubagentLink)]
    assert [(k.node, k.call_id) for k in links] == [("oc:msg_p2", None)]
    assert any("ses_q" in note and "inferred" in note for note in imported.report.inferred)
    assert [sub.journal for sub in imported.subagents] == ["oc:ses_p.agent-ses_q"]


def test_two_sub_agent_sessions_that_would_share_a_journal_are_refused() -> None:
    kids = tuple(
        Stored(session={"id": sid, "parentID": "ses_p"}, messages=()) for sid in ("ses_a/x", "ses_a?x")
    )
    with pytest.raises(OpenCodeStorageError, match="would both be journal"):
        import_opencode(Stored(session=PARENT, messages=(), children=kids), name="main")
