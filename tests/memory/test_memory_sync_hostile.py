"""Issue 43: a hostile or broken remote. Every value read from it is data (a typed one-line error, never a
traceback), a note holding a token in a URL syncs again and again, a rewritten history is detected (the
journal records where each sync left the remote), and git's own failures are one line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.git_remotes import ENV, bare, git
from waybook import JsonlJournal
from waybook.integrations.git_memory import GitMemoryError
from waybook.integrations.git_sync import RemoteFormatError, SyncConflictError, sync_git
from waybook.memory import Memory
from waybook.model import MemorySynced

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
GHP = "ghp_" + "Zk3pQ9vX2mL8rT4wN6yBZk3pQ9vX2mL8rT4w"


def memory(tmp_path: Path) -> tuple[JsonlJournal, Memory]:
    journal = JsonlJournal(tmp_path / "m.jsonl")
    port = Memory(journal, scope="agent")
    assert port.execute({"command": "create", "path": "/memories/prefs.md", "text": "likes tea\n"}).ok
    return journal, port


def clone(remote: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(remote), str(where)], env=ENV, check=True)
    return where


def commit(repo: Path, message: str, *, parent: str | None = None) -> str:
    """A commit of the clone's index with `message` (trailers and all), on `parent` (default HEAD)."""
    git(repo, "add", "-A")
    tree = git(repo, "write-tree").strip()
    base = parent if parent is not None else git(repo, "rev-parse", "HEAD").strip()
    done = subprocess.run(
        ["git", "-C", str(repo), "commit-tree", tree, "-p", base, "-m", message],
        capture_output=True,
        text=True,
        env={
            **ENV,
            "GIT_AUTHOR_NAME": "x",
            "GIT_AUTHOR_EMAIL": "x@x",
            "GIT_COMMITTER_NAME": "x",
            "GIT_COMMITTER_EMAIL": "x@x",
        },
        check=True,
    )
    return done.stdout.strip()


def force_push(repo: Path, sha: str) -> None:
    git(repo, "push", "-q", "-f", "origin", f"{sha}:refs/heads/main")


def test_a_trailer_that_is_not_a_seq_is_a_typed_error_naming_the_commit(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    work = clone(remote, tmp_path / "c")
    journal_id = git(work, "log", "-1", "--format=%(trailers:key=Waybook-Journal,valueonly)").strip()
    (work / "memories" / "prefs.md").write_text("likes coffee\n")
    bad = commit(
        work, f"edit\n\nWaybook-Journal: {journal_id}\nWaybook-Seq: two\nWaybook-Receipt: {'a' * 64}\n"
    )
    git(work, "push", "-q", "origin", f"{bad}:refs/heads/main")
    head = journal.head()
    with pytest.raises(RemoteFormatError, match=r"Waybook-Seq 'two', which is not a seq") as caught:
        sync_git(journal, str(remote))
    assert "\n" not in str(caught.value)
    assert bad[:12] in str(caught.value)
    assert journal.head() == head


def test_a_receipt_that_is_not_a_digest_is_a_typed_error(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    work = clone(remote, tmp_path / "c")
    journal_id = git(work, "log", "-1", "--format=%(trailers:key=Waybook-Journal,valueonly)").strip()
    (work / "memories" / "prefs.md").write_text("likes coffee\n")
    bad = commit(work, f"edit\n\nWaybook-Journal: {journal_id}\nWaybook-Seq: 2\nWaybook-Receipt: <script>\n")
    git(work, "push", "-q", "origin", f"{bad}:refs/heads/main")
    with pytest.raises(RemoteFormatError, match="not a record digest"):
        sync_git(journal, str(remote))


def test_a_note_holding_a_token_in_a_url_syncs_again_and_again(tmp_path: Path) -> None:
    journal, port = memory(tmp_path)
    text = f"clone with https://{GHP}@github.com/acme/app.git\n"
    assert port.execute({"command": "create", "path": "/memories/repo.md", "text": text}).ok
    remote = bare(tmp_path)
    assert sync_git(journal, str(remote)).status == "pushed"
    assert sync_git(journal, str(remote)).status == "up-to-date"
    assert port.execute({"command": "create", "path": "/memories/more.md", "text": "more\n"}).ok
    assert sync_git(journal, str(remote)).status == "pushed"
    shown = git(remote, "show", "main:memories/repo.md")
    assert GHP not in shown
    assert "https://[REDACTED:github-token]@github.com/acme/app.git" in shown


def test_each_sync_records_where_it_left_the_remote_in_the_journal(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    report = sync_git(journal, str(remote))
    (last,) = [r.body for r in journal.read() if isinstance(r.body, MemorySynced)]
    assert last.commit == report.remote_head == git(remote, "rev-parse", "main").strip()
    assert last.tree == git(remote, "rev-parse", "main^{tree}").strip()
    assert last.remote == str(remote)
    count = len(list(journal.read()))
    assert sync_git(journal, str(remote)).status == "up-to-date"
    assert len(list(journal.read())) == count, "an unchanged remote writes nothing"


def test_a_force_push_copying_the_last_trailers_over_other_notes_is_not_up_to_date(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    work = clone(remote, tmp_path / "c")
    message = git(work, "log", "-1", "--format=%B")
    (work / "memories" / "prefs.md").write_text("likes nothing the journal ever held\n")
    parent = (
        git(work, "rev-parse", "HEAD^").strip()
        if git(work, "rev-list", "--count", "HEAD").strip() != "1"
        else None
    )
    forged = commit(work, message, parent=parent) if parent else _root_commit(work, message)
    force_push(work, forged)
    head = journal.head()
    with pytest.raises(SyncConflictError) as caught:
        sync_git(journal, str(remote))
    assert caught.value.kind == "rewritten"
    assert "\n" not in str(caught.value)
    assert journal.head() == head
    assert git(remote, "rev-parse", "main").strip() == forged, "nothing pushed"


def test_a_commit_on_top_copying_the_last_trailers_over_other_notes_is_refused(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    work = clone(remote, tmp_path / "c")
    message = git(work, "log", "-1", "--format=%B")
    (work / "memories" / "prefs.md").write_text("other notes under the same trailers\n")
    forged = commit(work, message)
    git(work, "push", "-q", "origin", f"{forged}:refs/heads/main")
    with pytest.raises(SyncConflictError) as caught:
        sync_git(journal, str(remote))
    assert caught.value.kind == "rewritten"


def test_a_history_reset_to_before_the_last_sync_is_refused(tmp_path: Path) -> None:
    journal, port = memory(tmp_path)
    remote = bare(tmp_path)
    first = sync_git(journal, str(remote)).remote_head
    assert port.execute({"command": "create", "path": "/memories/b.md", "text": "b\n"}).ok
    assert sync_git(journal, str(remote)).status == "pushed"
    work = clone(remote, tmp_path / "c")
    force_push(work, str(first))  # main rewound: the last synced commit is gone from its history
    with pytest.raises(SyncConflictError) as caught:
        sync_git(journal, str(remote))
    assert caught.value.kind == "rewritten"
    git(remote, "update-ref", "-d", "refs/heads/main")  # the documented way to start over
    assert sync_git(journal, str(remote)).status == "pushed"


def _root_commit(work: Path, message: str) -> str:
    git(work, "add", "-A")
    tree = git(work, "write-tree").strip()
    env = {
        **ENV,
        "GIT_AUTHOR_NAME": "x",
        "GIT_AUTHOR_EMAIL": "x@x",
        "GIT_COMMITTER_NAME": "x",
        "GIT_COMMITTER_EMAIL": "x@x",
    }
    done = subprocess.run(
        ["git", "-C", str(work), "commit-tree", tree, "-m", message],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout.strip()


# --- git's own failures, in one line ----------------------------------------------------------------


def test_a_remote_that_is_no_repository_is_one_typed_line(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    missing = tmp_path / "nothing-here"
    missing.mkdir()
    with pytest.raises(GitMemoryError) as caught:
        sync_git(journal, str(missing))
    assert "\n" not in str(caught.value)
    assert "fetch" in str(caught.value)


def test_a_push_a_receive_hook_refuses_is_one_typed_line_not_a_moved_remote(tmp_path: Path) -> None:
    """Pushing to a local-path remote runs its receive hooks, as git does (docs/memory-git.md)."""
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'policy: no memory here' >&2\necho 'second line' >&2\nexit 1\n")
    hook.chmod(0o755)
    with pytest.raises(GitMemoryError) as caught:
        sync_git(journal, str(remote))
    assert not isinstance(caught.value, SyncConflictError)
    assert "\n" not in str(caught.value)
    assert "policy: no memory here" in str(caught.value)
    assert "the remote refused the push" in str(caught.value)


def test_a_push_to_a_checked_out_branch_is_one_typed_line(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = tmp_path / "worktree-remote"
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(remote)], env=ENV, check=True)
    (remote / "x").write_text("x")
    git(remote, "add", "x")
    git(remote, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "x")
    with pytest.raises(GitMemoryError) as caught:
        sync_git(journal, str(remote))
    assert "\n" not in str(caught.value)


def test_the_cli_reports_a_broken_trailer_in_one_line_with_exit_1(tmp_path: Path) -> None:
    journal, _ = memory(tmp_path)
    remote = bare(tmp_path)
    sync_git(journal, str(remote))
    work = clone(remote, tmp_path / "c")
    journal_id = git(work, "log", "-1", "--format=%(trailers:key=Waybook-Journal,valueonly)").strip()
    (work / "memories" / "prefs.md").write_text("likes coffee\n")
    bad = commit(
        work, f"edit\n\nWaybook-Journal: {journal_id}\nWaybook-Seq: two\nWaybook-Receipt: {'a' * 64}\n"
    )
    git(work, "push", "-q", "origin", f"{bad}:refs/heads/main")
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
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Waybook-Seq 'two'" in done.stderr
