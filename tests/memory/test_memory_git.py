"""Issue 22: memory as a git repository (the git program), out and back in through the port's rules."""

from __future__ import annotations

import os
import shutil
import subprocess
from itertools import count
from pathlib import Path

import pytest

from waybook import JsonlJournal
from waybook.integrations.git_memory import GitMemoryError, export_git, import_git
from waybook.memory import Memory

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=ENV, check=True
    )
    return done.stdout


def commit(repo: Path, message: str, *, hook: bool = True) -> None:
    """A commit made in the exported repository; `hook=False`: made where the pre-commit hook does not
    run (another clone, `--no-verify`), so import-git's own checks are what refuse it."""
    git(repo, "add", "-A")
    skip = () if hook else ("--no-verify",)
    git(
        repo,
        "-c",
        "user.name=agent",
        "-c",
        "user.email=a@example.invalid",
        "commit",
        "-q",
        *skip,
        "-m",
        message,
    )


def memory_file(path: Path) -> tuple[JsonlJournal, Memory]:
    journal = JsonlJournal(path)
    ids = (f"{n:04d}" for n in count(1))
    memory = Memory(journal, scope="agent", clock=lambda: "2026-12-01T09:00:00.000Z", ids=lambda: next(ids))
    for n, command in enumerate(
        (
            {"command": "create", "path": "/memories/prefs.md", "text": "likes tea\n"},
            {"command": "create", "path": "/memories/keys.md", "text": "token sk-ant-abcdefghijklmnop1234\n"},
            {"host": "/memories/fixed.md", "text": "---\nread_only: true\n---\nkeep\n"},
            {"command": "rename", "old_path": "/memories/prefs.md", "new_path": "/memories/people/me.md"},
            {"command": "delete", "path": "/memories/keys.md"},
        )
    ):
        if "host" in command:  # a read-only note: the host writes it
            writes = {command["host"]: command["text"]}
            assert memory.write_changes(writes=writes, call_id=f"toolu_{n}", command="create", host=True).ok
            continue
        assert memory.execute(command, call_id=f"toolu_{n}").ok
    return journal, memory


def test_one_commit_per_record_with_trailers_and_secrets_redacted(tmp_path: Path) -> None:
    journal, _ = memory_file(tmp_path / "m.jsonl")
    report = export_git(journal, tmp_path / "repo")
    assert report.commits == 5
    assert report.redacted == 1
    log = git(tmp_path / "repo", "log", "--reverse", "--format=%(trailers:key=Waybook-Seq,valueonly)%x00")
    assert [x.strip() for x in log.split("\0") if x.strip()] == ["2", "3", "4", "5", "6"]
    message = git(tmp_path / "repo", "log", "-1", "--format=%B")
    record = list(journal.read())[-1]
    assert "Waybook-Journal: memory-0001" in message
    assert f"Waybook-Receipt: {record.digest}" in message
    assert sorted(p.name for p in (tmp_path / "repo" / "memories").rglob("*.md")) == ["fixed.md", "me.md"]
    everything = git(tmp_path / "repo", "log", "-p", "--all")
    assert "sk-ant-" not in everything
    assert "[REDACTED:anthropic-key]" in everything


def test_the_same_journal_exports_to_the_same_commit_ids(tmp_path: Path) -> None:
    journal, _ = memory_file(tmp_path / "m.jsonl")
    first = export_git(journal, tmp_path / "a")
    second = export_git(JsonlJournal(tmp_path / "m.jsonl"), tmp_path / "b")
    assert first.head == second.head
    assert first.head is not None
    with pytest.raises(GitMemoryError, match="not an empty directory"):
        export_git(journal, tmp_path / "a")


def test_commits_made_on_the_export_come_back_as_memory_records(tmp_path: Path) -> None:
    journal, memory = memory_file(tmp_path / "m.jsonl")
    repo = tmp_path / "repo"
    export_git(journal, repo)
    (repo / "memories" / "new.md").write_text("a new note\n")
    (repo / "memories" / "people" / "me.md").write_text("likes coffee now\n")
    commit(repo, "agent edits")
    git(repo, "mv", "memories/new.md", "memories/moved.md")
    commit(repo, "agent moves")
    report = import_git(repo, journal)
    assert len(report.imported) == 2
    files = {path: f.text for path, f in memory.state().files.items()}
    assert files["/memories/moved.md"] == "a new note\n"
    assert files["/memories/people/me.md"] == "likes coffee now\n"
    assert "/memories/new.md" not in files
    sha = report.imported[0]
    assert f"git-{sha}" in memory.state().requests  # the commit id is the request id
    again = import_git(repo, journal)
    assert (again.imported, again.skipped) == ((), report.imported)  # repeatable


def test_a_commit_that_breaks_the_rules_is_refused_and_nothing_of_it_is_written(tmp_path: Path) -> None:
    journal, _ = memory_file(tmp_path / "m.jsonl")
    repo = tmp_path / "repo"
    export_git(journal, repo)
    head = journal.head()
    (repo / "memories" / "fixed.md").write_text("changed\n")
    (repo / "memories" / "other.md").write_text("fine\n")
    commit(repo, "touch a read-only note", hook=False)
    with pytest.raises(GitMemoryError, match="INVALID_ARGUMENT"):
        import_git(repo, journal)
    assert journal.head() == head
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / "outside.md").write_text("x\n")
    commit(repo, "a file outside memories/", hook=False)
    with pytest.raises(GitMemoryError, match="outside memories"):
        import_git(repo, journal)
    assert journal.head() == head


def test_a_journal_that_moved_since_the_export_is_refused(tmp_path: Path) -> None:
    journal, memory = memory_file(tmp_path / "m.jsonl")
    repo = tmp_path / "repo"
    export_git(journal, repo)
    memory.execute({"command": "create", "path": "/memories/late.md", "text": "x"})
    (repo / "memories" / "n.md").write_text("y\n")
    commit(repo, "n")
    with pytest.raises(GitMemoryError, match="export again"):
        import_git(repo, journal)


def test_the_cli_exports_and_imports(tmp_path: Path) -> None:
    from tests.helpers.cli_runner import waybook  # in-process: waybook.cli.main

    memory_file(tmp_path / "m.jsonl")
    out = waybook("memory", "export-git", tmp_path / "m.jsonl", tmp_path / "repo")
    assert out.returncode == 0, out.stderr
    (tmp_path / "repo" / "memories" / "cli.md").write_text("from the cli\n")
    commit(tmp_path / "repo", "cli")
    back = waybook("memory", "import-git", tmp_path / "repo", tmp_path / "m.jsonl", "--json")
    assert back.returncode == 0, back.stderr
    assert '"imported"' in back.stdout


def test_a_secret_spelled_by_a_path_is_masked_too(tmp_path: Path) -> None:
    journal = JsonlJournal(tmp_path / "m.jsonl")
    memory = Memory(journal, scope="agent")
    assert memory.execute(
        {"command": "create", "path": "/memories/sk-ant-abcdefghijklmnop1234.md", "text": "x"}
    ).ok
    export_git(journal, tmp_path / "repo")
    everything = git(tmp_path / "repo", "log", "-p", "--all") + git(tmp_path / "repo", "ls-files")
    assert "sk-ant-" not in everything


def test_the_cli_exports_and_imports_a_memory_journal_of_a_store(tmp_path: Path) -> None:
    from tests.helpers.cli_runner import Ran, waybook  # in-process: waybook.cli.main
    from waybook.stores import open_store

    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        memory = Memory(
            store.create("agent", role="working_memory", metadata={"scope": "agent"}), scope="agent"
        )
        assert memory.execute({"command": "create", "path": "/memories/prefs.md", "text": "tea\n"}).ok

    def cli(*args: str) -> Ran:
        return waybook("memory", *args)

    out = cli("export-git", "agent", str(tmp_path / "repo"), "--store", url)
    assert out.returncode == 0, out.stderr
    (tmp_path / "repo" / "memories" / "cli.md").write_text("from the cli\n")
    commit(tmp_path / "repo", "cli")
    back = cli("import-git", str(tmp_path / "repo"), "agent", "--store", url, "--json")
    assert back.returncode == 0, back.stderr
    with open_store(url) as store:
        assert "/memories/cli.md" in {
            r.body.path for r in store.open("agent").read() if hasattr(r.body, "path")
        }
    missing = cli("import-git", str(tmp_path / "repo"), "nobody", "--store", url)
    assert missing.returncode == 2
    assert "no memory journal 'nobody'" in missing.stderr


def test_a_committed_symlink_is_refused_and_no_commit_of_the_import_is_written(tmp_path: Path) -> None:
    journal, memory = memory_file(tmp_path / "m.jsonl")
    repo = tmp_path / "repo"
    export_git(journal, repo)
    head = journal.head()
    (repo / "memories" / "fine.md").write_text("a fine note\n")
    commit(repo, "a regular note first")
    (repo / "memories" / "link.md").symlink_to("/etc/passwd")
    commit(repo, "a link to a file outside memory", hook=False)
    with pytest.raises(GitMemoryError, match=r"link\.md in commit [0-9a-f]{12} is a symbolic link"):
        import_git(repo, journal)
    assert journal.head() == head, "the commit before the symlink was not written either"
    assert "/memories/link.md" not in memory.state().files


def test_a_note_turned_into_a_symlink_is_refused(tmp_path: Path) -> None:
    journal, _ = memory_file(tmp_path / "m.jsonl")
    repo = tmp_path / "repo"
    export_git(journal, repo)
    head = journal.head()
    target = repo / "memories" / "people" / "me.md"
    target.unlink()
    target.symlink_to("../fixed.md")
    commit(repo, "the note becomes a link", hook=False)
    with pytest.raises(GitMemoryError, match="symbolic link"):
        import_git(repo, journal)
    assert journal.head() == head


def test_directory_deletes_and_renames_export_as_commits_naming_the_directory(tmp_path: Path) -> None:
    journal, memory = memory_file(tmp_path / "m.jsonl")
    for command in (
        {"command": "rename", "old_path": "/memories/people", "new_path": "/memories/folk"},
        {"command": "delete", "path": "/memories/folk/me.md"},
        {"command": "delete", "path": "/memories/folk"},  # empty now: a commit that changes no file
    ):
        assert memory.execute(command).ok, command
    report = export_git(journal, tmp_path / "repo")
    assert report.commits == 8
    subjects = git(tmp_path / "repo", "log", "-3", "--reverse", "--format=%s").splitlines()
    assert subjects == [
        "rename /memories/people -> /memories/folk",
        "delete /memories/folk/me.md",
        "delete /memories/folk",
    ]
    assert sorted(p.name for p in (tmp_path / "repo" / "memories").rglob("*.md")) == ["fixed.md"]
