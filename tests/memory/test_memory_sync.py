"""Issue 32: memory synced with a git remote (a local bare repository), secrets never leaving."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from waybook import JsonlJournal
from waybook.integrations.git_sync import SyncConflictError, sync_git
from waybook.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
SECRET = "sk-ant-abcdefghijklmnop1234"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=ENV, check=True
    )
    return done.stdout


def bare(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", "--bare", str(remote)], env=ENV, check=True
    )
    return remote


def review(remote: Path, tmp_path: Path, edits: dict[str, str], name: str = "review") -> str:
    """A reviewer clones the remote, edits notes, commits and pushes; returns the commit id."""
    clone = tmp_path / name
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], env=ENV, check=True)
    for path, text in edits.items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=rev", "-c", "user.email=r@example.invalid", "commit", "-q", "-m", "reviewed")
    git(clone, "push", "-q", "origin", "HEAD:main")
    return git(clone, "rev-parse", "HEAD").strip()


def everything_in(remote: Path) -> bytes:
    listing = subprocess.run(
        ["git", "-C", str(remote), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        env=ENV,
        check=True,
    )
    return listing.stdout


def memory_with_secret(tmp_path: Path) -> tuple[JsonlJournal, Memory]:
    journal = JsonlJournal(tmp_path / "m.jsonl")
    memory = Memory(journal, scope="agent")
    assert memory.execute({"command": "create", "path": "/memories/prefs.md", "text": "likes tea\n"}).ok
    keys = {"command": "create", "path": "/memories/keys.md", "text": f"the key is {SECRET}\n"}
    assert memory.execute(keys, call_id=f"call {SECRET}").ok
    return journal, memory


def test_a_first_sync_pushes_the_memory_and_a_planted_secret_never_reaches_the_remote(tmp_path: Path) -> None:
    journal, _ = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    report = sync_git(journal, str(remote))
    assert (report.status, report.pushed, report.imported) == ("pushed", 2, ())
    assert report.redacted >= 2
    assert git(remote, "rev-parse", "main").strip() == report.remote_head
    assert SECRET.encode() not in everything_in(remote)
    assert b"[REDACTED:anthropic-key]" in everything_in(remote)
    again = sync_git(journal, str(remote))
    assert (again.status, again.pushed) == ("up-to-date", 0)


def test_new_records_are_pushed_as_a_fast_forward(tmp_path: Path) -> None:
    journal, memory = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    first = sync_git(journal, str(remote))
    assert memory.execute({"command": "create", "path": "/memories/more.md", "text": "more\n"}).ok
    second = sync_git(journal, str(remote))
    assert (second.status, second.pushed) == ("pushed", 1)
    assert git(remote, "merge-base", "--is-ancestor", str(first.remote_head), "main") == ""


def test_reviewed_commits_come_back_through_the_port_and_a_sync_commit_closes_them(tmp_path: Path) -> None:
    journal, memory = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    reviewed = review(remote, tmp_path, {"memories/prefs.md": "likes green tea\n"})
    report = sync_git(journal, str(remote))
    assert report.status == "pulled-and-pushed"
    assert report.imported == (reviewed,)
    assert memory.state().files["/memories/prefs.md"].text == "likes green tea\n"
    assert git(remote, "rev-parse", "main^").strip() == reviewed  # the sync commit sits on the review
    assert "Waybook-Seq: " in git(remote, "log", "-1", "--format=%B", "main")
    assert sync_git(journal, str(remote)).status == "up-to-date"
    assert memory.execute({"command": "create", "path": "/memories/later.md", "text": "x\n"}).ok
    later = sync_git(journal, str(remote))
    assert (later.status, later.pushed) == ("pushed", 1)
    second = review(remote, tmp_path, {"memories/later.md": "y\n"}, name="review2")
    assert sync_git(journal, str(remote)).imported == (second,)
    assert SECRET.encode() not in everything_in(remote)


def test_both_sides_changed_is_a_typed_conflict_and_nothing_is_merged(tmp_path: Path) -> None:
    journal, memory = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    review(remote, tmp_path, {"memories/prefs.md": "from the reviewer\n"})
    tip = git(remote, "rev-parse", "main").strip()
    assert memory.execute({"command": "create", "path": "/memories/prefs.md", "text": "from the agent\n"}).ok
    head = journal.head()
    with pytest.raises(SyncConflictError) as caught:
        sync_git(journal, str(remote))
    assert caught.value.kind == "diverged"
    assert caught.value.remote == tip
    assert journal.head() == head, "nothing imported"
    assert git(remote, "rev-parse", "main").strip() == tip, "nothing pushed"


def test_a_remote_holding_another_memory_is_refused(tmp_path: Path) -> None:
    journal, _ = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    other = JsonlJournal(tmp_path / "other.jsonl")
    assert (
        Memory(other, scope="agent").execute({"command": "create", "path": "/memories/o.md", "text": "o"}).ok
    )
    sync_git(other, str(remote))
    with pytest.raises(SyncConflictError) as caught:
        sync_git(journal, str(remote))
    assert caught.value.kind == "foreign"


def test_the_cli_syncs_an_identity_with_a_remote(tmp_path: Path) -> None:
    from waybook.memory import home, seed_blocks

    remote = bare(tmp_path)
    env = {**os.environ, "WAYBOOK_HOME": str(tmp_path / "wb")}
    code = "from waybook.memory import home, seed_blocks\nwith home('agent') as h: seed_blocks(h)"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    run = [sys.executable, "-m", "waybook", "memory", "sync", "--identity", "agent", "--remote", str(remote)]
    done = subprocess.run([*run, "--json"], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert '"status": "pushed"' in done.stdout
    assert "memories/persona.md" in git(remote, "ls-tree", "-r", "--name-only", "main")
    review(remote, tmp_path, {"memories/user.md": "---\ndescription: the user\n---\nAna\n"})
    pulled = subprocess.run(run, capture_output=True, text=True, env=env, check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert "1 commits imported" in pulled.stdout
    with home("agent", store=f"file:{tmp_path / 'wb' / 'store'}") as mine:
        assert mine.memory().state().files["/memories/user.md"].text.endswith("Ana\n")
        assert not seed_blocks(mine).written
    missing = subprocess.run(
        [sys.executable, "-m", "waybook", "memory", "sync", "--remote", str(remote)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert missing.returncode == 2
    assert "--identity" in missing.stderr


def test_an_object_the_redaction_patterns_would_change_is_never_pushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The export redacts; should it ever miss a secret, the push check refuses the whole push."""
    import waybook.integrations.git_memory as git_memory
    from waybook.integrations.git_sync import SecretLeakError

    class Blind:
        total = 0

        def text(self, value: str) -> str:
            return value

    monkeypatch.setattr(git_memory, "Redactor", Blind)
    journal, _ = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    with pytest.raises(SecretLeakError, match="redaction patterns mask; nothing was pushed"):
        sync_git(journal, str(remote))
    assert everything_in(remote) == b""


def test_the_cli_reports_a_conflict_with_exit_1_and_changes_nothing(tmp_path: Path) -> None:
    journal, memory = memory_with_secret(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    review(remote, tmp_path, {"memories/prefs.md": "from the reviewer\n"})
    assert memory.execute({"command": "create", "path": "/memories/prefs.md", "text": "agent\n"}).ok
    journal.close()
    run = [
        sys.executable,
        "-m",
        "waybook",
        "memory",
        "sync",
        str(tmp_path / "m.jsonl"),
        "--remote",
        str(remote),
    ]
    done = subprocess.run([*run, "--json"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert '"kind": "diverged"' in done.stdout
    assert "nothing was merged" in done.stderr


def test_waybook_memory_reads_an_identity(tmp_path: Path) -> None:
    from waybook.memory import home, seed_blocks

    env = {**os.environ, "WAYBOOK_HOME": str(tmp_path / "wb")}
    with home("agent", store=f"file:{tmp_path / 'wb' / 'store'}") as mine:
        seed_blocks(mine)
    shown = subprocess.run(
        [sys.executable, "-m", "waybook", "memory", "--identity", "agent", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "/memories/persona.md" in shown.stdout
    both = subprocess.run(
        [sys.executable, "-m", "waybook", "memory", "x.jsonl", "--identity", "agent"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert both.returncode == 2
    assert "not both" in both.stderr
