"""Issue 43 (imports): `waybook import` reads regular files only, inside the folder it walks. A FIFO is
refused at once, naming it (it used to block the import forever), and a folder import never follows a
link out of the folder (it used to store the linked file's text). Nothing is written either way."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers.claude_code import short_transcript
from tests.helpers.cli_runner import run_installed, waybook

WAIT = 120
"""Seconds a refused import may take here, at most (one that waits on the FIFO never ends)."""


def test_a_fifo_named_as_a_sub_agent_is_refused_at_once_and_nothing_is_written(tmp_path: Path) -> None:
    project, out = tmp_path / "project", tmp_path / "out"
    (project / "s-1" / "subagents").mkdir(parents=True)
    out.mkdir()
    (project / "s-1.jsonl").write_text(short_transcript("s-1"))
    fifo = project / "s-1" / "subagents" / "agent-x.jsonl"
    os.mkfifo(fifo)
    run = run_installed("import", "claude-code", project / "s-1.jsonl", "-o", out / "s.jsonl", timeout=WAIT)
    assert run.returncode == 2, run.stderr
    assert f"{fifo}: a FIFO, not a regular file" in run.stderr
    assert "nothing was written" in run.stderr
    assert list(out.iterdir()) == []


def test_a_fifo_in_a_folder_of_rollouts_is_refused_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "2026" / "05" / "11"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "rollout-x.jsonl")
    store = tmp_path / "store"
    run = run_installed("import", "codex", tmp_path / "sessions", "--store", f"file:{store}", timeout=WAIT)
    assert run.returncode == 2, run.stderr
    assert "rollout-x.jsonl: a FIFO" in run.stderr
    assert not store.exists()


def test_a_folder_import_does_not_follow_a_session_linked_from_outside(tmp_path: Path) -> None:
    project, store = tmp_path / "projects" / "p", tmp_path / "store"
    project.mkdir(parents=True)
    (project / "s-1.jsonl").write_text(short_transcript("s-1"))
    (tmp_path / "private.jsonl").write_text(short_transcript("s-2"))
    (project / "s-2.jsonl").symlink_to(tmp_path / "private.jsonl")
    run = waybook("import", "claude-code", tmp_path / "projects", "--store", f"file:{store}", "--json")
    assert run.returncode == 2, run.stdout
    failure = json.loads(run.stdout)
    assert failure["ok"] is False
    assert f"{project / 's-2.jsonl'}: a link outside the folder" in failure["error"]
    assert not store.exists()
