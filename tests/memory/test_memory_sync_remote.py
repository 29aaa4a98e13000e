"""`sync` finds its remote when none is named (issue 40): the remote this memory last synced with,
recorded in its own sync repository; never the git remote of the directory it runs in (the agent's code
repository), and a memory that never synced is refused, naming `--remote`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.git_remotes import ENV, bare, git, tree
from waybook import JsonlJournal
from waybook.integrations.git_sync import NoRemoteError, remembered_remote, sync_git, sync_repository
from waybook.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def code_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A code repository (the agent's work) whose `origin` is a bare remote of its own."""
    origin = tmp_path / "code-origin.git"
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare", str(origin)], env=ENV, check=True
    )
    code = tmp_path / "code"
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(code)], env=ENV, check=True)
    git(code, "remote", "add", "origin", str(origin))
    return code, origin


def test_a_memory_that_never_synced_is_refused_and_the_code_repositorys_remote_is_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAYBOOK_HOME", str(tmp_path / "wb"))
    code, origin = code_repository(tmp_path)
    monkeypatch.chdir(code)
    with JsonlJournal(tmp_path / "m.jsonl") as journal:
        Memory(journal, scope="a").execute({"command": "create", "path": "/memories/a.md", "text": "a\n"})
        with pytest.raises(NoRemoteError, match=r"never synced with one\. Give remote="):
            sync_git(journal)
    assert git(origin, "for-each-ref") == ""  # nothing reached the code repository's remote
    assert not (tmp_path / "wb" / "sync").exists()


def test_a_sync_records_its_remote_and_the_next_sync_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAYBOOK_HOME", str(tmp_path / "wb"))
    remote = bare(tmp_path)
    code, origin = code_repository(tmp_path)
    with JsonlJournal(tmp_path / "m.jsonl") as journal:
        memory = Memory(journal, scope="a")
        memory.execute({"command": "create", "path": "/memories/a.md", "text": "a\n"})
        assert sync_git(journal, str(remote)).status == "pushed"
        journal_id = memory.state().journal_id
        assert journal_id is not None
        assert remembered_remote(journal_id) == str(remote.resolve())
        assert git(sync_repository(journal_id), "config", "waybook.journal").strip() == journal_id
        memory.execute({"command": "create", "path": "/memories/b.md", "text": "b\n"})
        monkeypatch.chdir(code)  # run from inside the code repository: its origin is not memory's
        assert sync_git(journal).status == "pushed"
    assert tree(remote) == ["memories/a.md", "memories/b.md"]
    assert git(origin, "for-each-ref") == ""


def test_the_cli_names_remote_when_none_is_known_and_then_uses_the_recorded_one(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    code, origin = code_repository(tmp_path)
    env = {**os.environ, "WAYBOOK_HOME": str(tmp_path / "wb"), "PYTHONPATH": str(Path.cwd())}
    seed = "from waybook.memory import home, seed_blocks\nwith home('agent') as h: seed_blocks(h)"
    subprocess.run([sys.executable, "-c", seed], env=env, check=True)
    sync = [sys.executable, "-m", "waybook", "memory", "sync", "--identity", "agent"]
    refused = subprocess.run(sync, capture_output=True, text=True, env=env, cwd=code, check=False)
    assert refused.returncode == 2
    assert "Give --remote URL" in refused.stderr
    first = subprocess.run(
        [*sync, "--remote", str(remote)], capture_output=True, text=True, env=env, check=False
    )
    assert first.returncode == 0, first.stderr
    again = subprocess.run(sync, capture_output=True, text=True, env=env, cwd=code, check=False)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("up-to-date")
    assert "memories/persona.md" in tree(remote)
    assert git(origin, "for-each-ref") == ""
