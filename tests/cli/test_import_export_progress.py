"""Issue 30/33: long exports and imports show a progress bar on a terminal, and only there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.cli_runner import on_terminal, waybook
from tests.helpers.paths import SHARED_FIXTURES
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal


def test_an_export_of_a_large_journal_shows_progress_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import waybook.commands.export as export

    path = tmp_path / "s.jsonl"
    branching_session(JsonlJournal(path))
    monkeypatch.setattr(export, "PROGRESS_RECORDS", 1)  # this small journal counts as large
    status, seen = on_terminal(
        "export", path, "--format", "openai", "-o", tmp_path / "a.jsonl", stdout_too=False
    )
    assert status == 0
    assert b"exporting trajectories" in seen
    piped = waybook("export", path, "--format", "openai", "-o", tmp_path / "b.jsonl")
    assert "exporting" not in piped.stderr


@pytest.mark.skipif(not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout")
def test_a_folder_import_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    for n in range(5):
        (folder / str(n)).mkdir(parents=True)
        for rollout in (SHARED_FIXTURES / "codex").glob("rollout-*.jsonl"):
            text = rollout.read_text().replace("019e1625-789d-76c0-80ab-3724b5ddb799", f"session-{n}")
            (folder / str(n) / rollout.name).write_text(text)
    status, seen = on_terminal(
        "import", "codex", folder, "--store", f"file:{tmp_path / 'store'}", stdout_too=False
    )
    assert status == 0, seen.decode(errors="replace")
    assert b"reading 5 sessions" in seen
    shutil.rmtree(tmp_path / "store")
