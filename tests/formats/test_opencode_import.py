"""Issue 33, point 7: OpenCode sessions import from its JSON storage folder and its SQLite database.

The fixtures are built here from OpenCode's own schemas (packages/opencode/src/session/message-v2.ts:
message info and parts; session/session.sql.ts: the session, message and part tables), and the context
is checked against OpenCode's `toModelMessages` rules for what the model is sent.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import waybook
from waybook.formats._detect import detect_format
from waybook.formats._foreign import NotThisFormatError
from waybook.formats.opencode import OpenCodeStorageError, Stored, import_opencode, read_opencode
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, TextBlock, ThinkingBlock, ToolResult
from waybook.projections import TreeProjection, context_at, replay

SESSION = {
    "id": "ses_01",
    "projectID": "prj_1",
    "title": "fix the bug",
    "directory": "/w",
    "version": "1.0.0",
    "time": {"created": 1760000000000, "updated": 1760000005000},
}
TOKENS = {"input": 120, "output": 30, "reasoning": 5, "cache": {"read": 100, "write": 0}}


def assistant(mid: str, parent: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "sessionID": "ses_01", "role": "assistant", "time": {"created": 1760000002000},
            "parentID": parent, "modelID": "claude-x", "providerID": "anthropic", "mode": "build",
            "agent": "build", "path": {"cwd": "/w", "root": "/w"}, "cost": 0.01, "tokens": TOKENS,
            "finish": "tool-calls", **extra}  # fmt: skip


MESSAGES: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    (
        {
            "id": "msg_01",
            "sessionID": "ses_01",
            "role": "user",
            "time": {"created": 1760000001000},
            "agent": "build",
            "model": {"providerID": "anthropic", "modelID": "claude-x"},
        },
        [
            {"id": "prt_01", "type": "text", "text": "why does the test fail?"},
            {"id": "prt_02", "type": "text", "text": "(hidden)", "ignored": True},
            {
                "id": "prt_03",
                "type": "file",
                "mime": "text/plain",
                "url": "file:///w/a.py",
                "filename": "a.py",
            },
        ],
    ),
    (
        assistant("msg_02", "msg_01"),
        [
            {"id": "prt_10", "type": "step-start"},
            {"id": "prt_11", "type": "reasoning", "text": "look at the log", "time": {"start": 1}},
            {"id": "prt_12", "type": "text", "text": "Let me run it."},
            {
                "id": "prt_13",
                "type": "tool",
                "callID": "call_1",
                "tool": "bash",
                "state": {
                    "status": "completed",
                    "input": {"command": "pytest"},
                    "output": "1 failed",
                    "title": "pytest",
                    "metadata": {},
                    "time": {"start": 1, "end": 2},
                },
            },
            {
                "id": "prt_14",
                "type": "tool",
                "callID": "call_2",
                "tool": "read",
                "state": {"status": "running", "input": {"path": "a.py"}, "time": {"start": 3}},
            },
            {"id": "prt_15", "type": "step-finish", "reason": "tool-calls", "cost": 0.01, "tokens": TOKENS},
        ],
    ),
    (
        assistant("msg_03", "msg_01", error={"name": "APIError", "data": {"message": "overloaded"}}),
        [{"id": "prt_20", "type": "step-start"}],
    ),
    (
        assistant("msg_04", "msg_01", finish="stop"),
        [{"id": "prt_30", "type": "text", "text": "The fixture is missing."}],
    ),
]


def storage_folder(root: Path) -> Path:
    storage = root / "storage"
    (storage / "session" / "prj_1").mkdir(parents=True)
    (storage / "session" / "prj_1" / "ses_01.json").write_text(json.dumps(SESSION))
    for info, parts in MESSAGES:
        (storage / "message" / "ses_01").mkdir(parents=True, exist_ok=True)
        (storage / "message" / "ses_01" / f"{info['id']}.json").write_text(json.dumps(info))
        for part in parts:
            folder = storage / "part" / info["id"]
            folder.mkdir(parents=True, exist_ok=True)
            full = {**part, "sessionID": "ses_01", "messageID": info["id"]}
            (folder / f"{part['id']}.json").write_text(json.dumps(full))
    return storage


def database(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, title TEXT, directory TEXT, "
                   "version TEXT, time_created INTEGER, time_updated INTEGER)")  # fmt: skip
        db.execute("CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, "
                   "time_updated INTEGER, data TEXT)")  # fmt: skip
        db.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, "
                   "time_created INTEGER, time_updated INTEGER, data TEXT)")  # fmt: skip
        db.execute(
            "INSERT INTO session VALUES ('ses_01', 'prj_1', 'fix the bug', '/w', '1.0.0', 1760000000000, 0)"
        )
        for info, parts in MESSAGES:
            data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
            db.execute("INSERT INTO message VALUES (?, 'ses_01', ?, 0, ?)",
                       (info["id"], info["time"]["created"], json.dumps(data)))  # fmt: skip
            for part in parts:
                pdata = {k: v for k, v in part.items() if k != "id"}
                db.execute("INSERT INTO part VALUES (?, ?, 'ses_01', 0, 0, ?)",
                           (part["id"], info["id"], json.dumps(pdata)))  # fmt: skip
    return path


def context_of(records: Any) -> list[Any]:
    journal = InMemoryJournal("oc")
    journal.append(list(records), expected=GENESIS)
    return context_at(journal, replay(TreeProjection(), journal))


@pytest.mark.parametrize("kind", ["folder", "database"])
def test_an_opencode_session_imports_with_the_context_opencode_sends(tmp_path: Path, kind: str) -> None:
    path = storage_folder(tmp_path) if kind == "folder" else database(tmp_path / "opencode.db")
    imported = import_opencode(read_opencode(path, None))
    context = context_of(imported.records)
    user, turn, ran, interrupted, answer = (m.record.body for m in context)
    assert [b.text for b in user.content] == [
        "why does the test fail?"
    ]  # ignored and text/plain files left out
    assert isinstance(turn.content[0], ThinkingBlock)
    assert [c.call_id for c in turn.tool_calls] == ["call_1", "call_2"]
    assert turn.model == "claude-x"
    assert turn.usage["input_tokens"] == 120
    assert isinstance(ran, ToolResult)
    assert ran.content == (TextBlock(text="1 failed"),)
    assert interrupted.is_error
    assert interrupted.content[0].text == "[Tool execution was interrupted]"
    assert answer.content[0].text == "The fixture is missing."  # the errored msg_03 is not sent
    report = imported.report
    assert report.lines == 4 + 11
    assert report.mapped + report.kept_verbatim == report.lines


def test_the_cli_imports_a_folder_and_a_database_and_auto_finds_both(tmp_path: Path) -> None:
    folder = storage_folder(tmp_path / "a")
    db = database(tmp_path / "opencode.db")
    assert detect_format(db) == "opencode"
    for source, name in ((folder, "f.jsonl"), (db, "d.jsonl"), (folder.parent, "g.jsonl")):
        run = waybook("import", "auto", source, "-o", tmp_path / name, "--json")
        assert run.returncode == 0, run.stdout
        assert json.loads(run.stdout)["format"] == "opencode"
        assert waybook("verify", tmp_path / name).returncode == 0
    assert (tmp_path / "f.jsonl").read_bytes() == (tmp_path / "g.jsonl").read_bytes()


def test_a_database_is_read_only_and_several_sessions_need_one_chosen(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode.db")
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO session VALUES ('ses_02', 'prj_1', 'other', '/w', '1', 1, 0)")
    before = db.read_bytes()
    with pytest.raises(OpenCodeStorageError, match="choose one with --session"):
        read_opencode(db, None)
    assert read_opencode(db, "ses_01").session["id"] == "ses_01"
    assert db.read_bytes() == before


def test_hostile_part_files_are_refused_as_data(tmp_path: Path) -> None:
    storage = storage_folder(tmp_path)
    (storage / "part" / "msg_01" / "prt_01.json").write_text('{"type": "text", "text": ' + "[" * 100_000)
    with pytest.raises(OpenCodeStorageError, match="not JSON"):
        read_opencode(storage, None)


def test_an_unreadable_part_file_is_refused_by_name_or_skipped_and_reported_with_lenient(
    tmp_path: Path,
) -> None:
    storage = storage_folder(tmp_path)
    (storage / "part" / "msg_02" / "prt_12.json").write_text('{"type": "text", "text": ')
    out = tmp_path / "s.jsonl"
    run = waybook("import", "opencode", storage, "-o", out, "--json")
    assert run.returncode == 1
    assert "prt_12.json" in json.loads(run.stdout)["error"]
    assert not out.exists()
    run = waybook("import", "opencode", storage, "-o", out, "--json", "--lenient")
    assert run.returncode == 0, run.stdout
    report = json.loads(run.stdout)
    assert report["skipped"] == 1
    assert "prt_12.json" in report["skipped_lines"][0]["reason"]
    assert report["mapped"] + report["kept_verbatim"] + report["skipped"] == report["lines"]
    assert waybook("verify", out).returncode == 0


def test_a_folder_that_is_not_opencode_storage_is_not_this_format(tmp_path: Path) -> None:
    with pytest.raises(NotThisFormatError, match="not an OpenCode storage folder"):
        read_opencode(tmp_path, None)


def test_an_opencode_folder_imports_into_a_store_under_the_id_given(tmp_path: Path) -> None:
    run = waybook("import", "opencode", storage_folder(tmp_path), "--store", f"file:{tmp_path / 'st'}", "one")
    assert run.returncode == 0, run.stderr
    assert waybook("verify", "--store", f"file:{tmp_path / 'st'}", "one").returncode == 0


def test_a_part_file_linking_outside_the_storage_folder_is_not_followed(tmp_path: Path) -> None:
    storage = storage_folder(tmp_path / "src")
    elsewhere = tmp_path / "secret.json"
    elsewhere.write_text('{"type": "text", "text": "not OpenCode\'s"}')
    (storage / "part" / "msg_01" / "prt_09.json").symlink_to(elsewhere)
    with pytest.raises(OpenCodeStorageError, match="outside the storage folder"):
        read_opencode(storage, None)
    assert "not OpenCode's" not in json.dumps(read_opencode(storage, None, lenient=True).messages)


@pytest.mark.parametrize(
    "kind", [["text"], {"type": "text"}, 7, None], ids=["list", "object", "number", "null"]
)
@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_part_whose_type_is_not_a_string_is_kept_verbatim(kind: Any, role: str) -> None:
    # Found by the storage fuzz test (aee20c2): a part whose `type` was a list or an object raised an
    # untyped TypeError (it was looked up in a set of part kinds).
    info, parts = MESSAGES[0] if role == "user" else MESSAGES[3]
    odd = {"id": "prt_99", "type": kind, "text": "not a known part"}
    stored = Stored(session=SESSION, messages=((info, (*parts, odd)),))
    imported = import_opencode(stored)
    kept = [r.body.details for r in imported.records if getattr(r.body, "details", None)]
    assert any(odd in d["opencode"]["parts"] for d in kept)
    report = imported.report
    assert report.mapped + report.kept_verbatim + len(report.skipped) == report.lines
