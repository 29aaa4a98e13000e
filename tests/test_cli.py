"""The installed `waybook` console script, run as a user would: exit codes, stdout vs stderr, --json."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from waybook import JsonlJournal, Session

WAYBOOK = shutil.which("waybook")
pytestmark = pytest.mark.skipif(WAYBOOK is None, reason="the console script is not installed")


def waybook(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert WAYBOOK is not None
    return subprocess.run([WAYBOOK, *map(str, args)], capture_output=True, text=True, check=False)


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="cli")
        question = session.user("hi")
        session.assistant("hello")
        session.branch_from(question.id, reason="retry")
        session.assistant("hello again")
    return path


def test_version_prints_the_version() -> None:
    from waybook import __version__

    run = waybook("--version")
    assert run.returncode == 0
    assert run.stdout.strip() == f"waybook {__version__}"


def test_no_command_is_a_usage_error_on_stderr() -> None:
    run = waybook()
    assert run.returncode == 2
    assert run.stdout == ""
    assert "usage:" in run.stderr


def test_verify_a_good_journal_exits_0(session_file: Path) -> None:
    run = waybook("verify", session_file)
    assert run.returncode == 0
    assert "ok, 5 records" in run.stdout
    assert run.stderr == ""


def test_verify_a_torn_tail_exits_1_and_says_what_repair_would_remove(session_file: Path) -> None:
    size = session_file.stat().st_size
    session_file.write_bytes(session_file.read_bytes()[:-20])
    run = waybook("verify", session_file, "--json")
    assert run.returncode == 1
    (report,) = json.loads(run.stdout)
    assert report["ok"] is False
    assert report["torn_tail"] is True
    assert report["bad_seq"] == 5
    assert 0 < report["offset"] < size
    human = waybook("verify", session_file)
    assert "waybook repair" in human.stdout


def test_verify_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    run = waybook("verify", tmp_path / "nope.jsonl")
    assert run.returncode == 2
    assert "no such journal" in run.stderr
