"""Issue 14: every subcommand, given a missing, damaged, foreign, binary or directory input, exits with
the right code and one line on stderr, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import JsonlJournal, Session
from waybook.memory import Memory

KINDS = ["missing", "directory", "not-a-journal", "binary", "damaged"]
EXPECTED = {
    "missing": (2, "no such"),
    "directory": (2, "is a directory"),
    "not-a-journal": (1, "not a waybook journal"),
    "binary": (1, "not a waybook journal"),
    "damaged": (1, "torn tail"),
}
COMMANDS: dict[str, list[str]] = {
    "verify": ["verify", "{P}"],
    "tree": ["tree", "{P}"],
    "log": ["log", "{P}"],
    "show": ["show", "{P}"],
    "show --context": ["show", "{P}", "--context"],
    "diff": ["diff", "{P}", "--leaf", "u1", "--leaf", "a1"],
    "export": ["export", "{P}", "--format", "openai", "-o", "{OUT}"],
    "export archival": ["export", "{P}", "--format", "archival", "-o", "{OUT}"],
    "repair": ["repair", "{P}"],
    "memory": ["memory", "{P}"],
    "import pi": ["import", "pi", "{P}", "-o", "{OUT}"],
}
OVERRIDES = {  # where a command's answer differs, and why
    ("verify", "damaged"): (1, "FAILED"),  # verify reports on stdout; its stderr stays empty
    ("repair", "damaged"): (1, "nothing changed"),  # repair is the cure: it asks first
    ("import pi", "not-a-journal"): (1, "not a Pi entry"),
    ("import pi", "binary"): (1, "cannot be imported"),
    ("import pi", "damaged"): (1, "cannot be imported"),
    ("import pi", "directory"): (2, "a folder imports into a store"),
}


def make(kind: str, command: str, tmp_path: Path) -> Path:
    path = tmp_path / "input.jsonl"
    if kind == "missing":
        return path
    if kind == "directory":
        path.mkdir()
        return path
    if kind == "binary":
        path.write_bytes(bytes(range(256)) * 8)
        return path
    if kind == "not-a-journal":
        path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
        return path
    if command == "import pi":  # a Pi file whose last line was cut short
        header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z"}
        path.write_text(json.dumps(header) + '\n{"type":"message","id":"a","parentId":null,"mess')
        return path
    with JsonlJournal(path) as journal:
        if command == "memory":
            Memory(journal, scope="agent").execute(
                {"command": "create", "path": "/memories/a.md", "text": "x"}
            )
        else:
            ids = iter(["h", "u1", "a1", "m", "a2", "u2"])
            session = Session.create(journal, journal_id="s", ids=lambda: next(ids))
            question = session.user("hi")
            session.assistant("hello")
            session.branch_from(question.id, reason="retry")
            session.assistant("again")
            session.user("bye")
    path.write_bytes(path.read_bytes()[:-12])
    return path


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reports_a_bad_input_in_one_line_with_the_right_exit_code(
    command: str, kind: str, tmp_path: Path
) -> None:
    path = make(kind, command, tmp_path)
    before = path.read_bytes() if path.is_file() else None
    out = tmp_path / "out.jsonl"
    args = [str(path) if a == "{P}" else str(out) if a == "{OUT}" else a for a in COMMANDS[command]]
    run = waybook(*args)
    code, said = OVERRIDES.get((command, kind), EXPECTED[kind])
    assert run.returncode == code, (run.stdout[-500:], run.stderr)
    assert said in run.stderr + (run.stdout if command in ("verify", "repair") else "")
    assert "Traceback" not in run.stderr
    # One line for the problem, beside what the command did; an export also says it was not redacted.
    problems = [line for line in run.stderr.strip().splitlines() if "not redacted:" not in line]
    assert len(problems) <= 2, run.stderr
    if before is not None:
        assert path.read_bytes() == before, "a bad input is never changed"
    if code == 2 or kind != "damaged":
        assert not out.exists(), "nothing is written for an input that could not be read"
