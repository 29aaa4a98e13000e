"""Issue 40: sync never gets stuck and never loses a note in git.

Masked names never collide (refused before anything is pushed), a refused review is fixed by a new
remote commit, reflection records never make a review unpullable, and export makes one commit per
memory operation with a hook that runs memory's checks before a commit.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.git_remotes import ENV, bare, git, review, tree
from waybook.integrations.git_memory import GitMemoryError, MaskedNameError, export_git
from waybook.integrations.git_sync import sync_git
from waybook.journal import InMemoryJournal
from waybook.memory import Memory
from waybook.memory.tools.reflection import ReflectionScheduler

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
KEY_A = "sk-ant-abcdefghijklmnop1234"
KEY_B = "sk-ant-qrstuvwxyzabcdef5678"


def port(journal: InMemoryJournal) -> Memory:
    return Memory(journal, scope="agent")


def test_two_notes_whose_names_mask_alike_are_refused_before_anything_is_pushed(tmp_path: Path) -> None:
    journal = InMemoryJournal("m")
    memory = port(journal)
    for key in (KEY_A, KEY_B):
        assert memory.execute({"command": "create", "path": f"/memories/{key}.md", "text": "x\n"}).ok
    remote = bare(tmp_path)
    with pytest.raises(MaskedNameError, match="rename one of them"):
        sync_git(journal, str(remote))
    assert git(remote, "for-each-ref") == ""  # nothing pushed
    assert memory.execute({"command": "delete", "path": f"/memories/{KEY_B}.md"}).ok
    with pytest.raises(MaskedNameError):  # the history still holds both at once
        sync_git(journal, str(remote))
    assert git(remote, "for-each-ref") == ""


def test_a_note_renamed_away_from_a_masked_name_before_the_other_came_exports(tmp_path: Path) -> None:
    journal = InMemoryJournal("m")
    memory = port(journal)
    assert memory.execute({"command": "create", "path": f"/memories/{KEY_A}.md", "text": "a\n"}).ok
    rename = {"command": "rename", "old_path": f"/memories/{KEY_A}.md", "new_path": "/memories/a.md"}
    assert memory.execute(rename).ok
    assert memory.execute({"command": "create", "path": f"/memories/{KEY_B}.md", "text": "b\n"}).ok
    remote = bare(tmp_path)
    assert sync_git(journal, str(remote)).status == "pushed"
    assert tree(remote) == ["memories/[REDACTED:anthropic-key].md", "memories/a.md"]


def test_a_refused_review_is_fixed_by_a_new_remote_commit(tmp_path: Path) -> None:
    journal = InMemoryJournal("m")
    memory = port(journal)
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": "one\n"}).ok
    remote, clone = bare(tmp_path), tmp_path / "clone"
    sync_git(journal, str(remote))
    review(remote, clone, {"memories/bad name.md": "a space is not a memory path\n"})
    with pytest.raises(GitMemoryError, match="Fix it with a new commit"):
        sync_git(journal, str(remote))
    with pytest.raises(GitMemoryError):  # still refused: nothing changed on the remote
        sync_git(journal, str(remote))
    fix = review(remote, clone, {"memories/bad name.md": None, "memories/good.md": "fixed\n"}, "fix")
    report = sync_git(journal, str(remote))
    assert (report.status, report.imported) == ("pulled-and-pushed", (fix,))
    assert memory.state().files["/memories/good.md"].text == "fixed\n"
    assert "/memories/bad name.md" not in memory.state().files
    assert sync_git(journal, str(remote)).status == "up-to-date"


def test_reflection_records_never_make_a_review_unpullable(tmp_path: Path) -> None:
    journal = InMemoryJournal("m")
    memory = port(journal)
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": "one\n"}).ok
    remote, clone = bare(tmp_path), tmp_path / "clone"
    sync_git(journal, str(remote))
    scheduler = ReflectionScheduler(journal, [], step_threshold=1)
    scheduler.request(reason="after the push")
    run = scheduler.start()
    assert run is not None
    scheduler.finish(run, "no_changes")
    assert sync_git(journal, str(remote)).status == "up-to-date"  # bookkeeping is no memory change
    review(remote, clone, {"memories/a.md": "reviewed\n"})
    scheduler.request(reason="while the reviewer worked")
    report = sync_git(journal, str(remote))
    assert report.status == "pulled-and-pushed"
    assert memory.state().files["/memories/a.md"].text == "reviewed\n"


def test_a_three_file_patch_exports_as_one_commit_showing_the_moved_file_with_its_new_text(
    tmp_path: Path,
) -> None:
    journal = InMemoryJournal("m")
    memory = port(journal)
    assert memory.execute({"command": "create", "path": "/memories/todo.md", "text": "tea\nmilk\n"}).ok
    assert memory.execute({"command": "create", "path": "/memories/old.md", "text": "gone\n"}).ok
    patch = (
        "*** Begin Patch\n*** Add File: /memories/ana.md\n+Ana\n*** Delete File: /memories/old.md\n"
        "*** Update File: /memories/todo.md\n*** Move to: /memories/shopping.md\n@@\n tea\n-milk\n+oat milk\n"
        "*** End Patch"
    )
    assert memory.execute({"command": "apply_patch", "patch": patch}).ok
    report = export_git(journal, tmp_path / "repo")
    assert report.commits == 3
    shown = git(tmp_path / "repo", "show", "--stat", "--format=%s", "HEAD")
    assert "ana.md" in shown
    assert "old.md" in shown
    assert git(tmp_path / "repo", "show", "HEAD:memories/shopping.md") == "tea\noat milk\n"
    assert git(tmp_path / "repo", "show", "HEAD~1:memories/old.md") == "gone\n"


def test_the_exported_repository_refuses_a_commit_memory_would_refuse(tmp_path: Path) -> None:
    journal = InMemoryJournal("m")
    memory = Memory(journal, scope="agent", require_description=True)
    note = "---\ndescription: a note\n---\nbody\n"
    assert memory.execute({"command": "create", "path": "/memories/a.md", "text": note}).ok
    repo = tmp_path / "repo"
    export_git(journal, repo)
    ident = ("-c", "user.name=r", "-c", "user.email=r@x")
    for name, text in (
        ("memories/_ok.md", "---\ndescription: fine\n---\n"),
        ("memories/no-description.md", "just text\n"),
        ("memories/bad.md", "---\ndescription: [unclosed\n---\n"),
        ("memories/a b.md", "---\ndescription: x\n---\n"),
        ("notes.txt", "outside\n"),
    ):
        (repo / name).write_text(text)
        git(repo, "add", name)
        done = subprocess.run(
            ["git", "-C", str(repo), *ident, "commit", "-q", "-m", name],
            capture_output=True,
            text=True,
            env=ENV,
        )
        if name == "memories/_ok.md":
            assert done.returncode == 0, done.stderr
        else:
            assert done.returncode != 0, f"the hook let {name} through"
            assert "waybook:" in done.stderr
            git(repo, "reset", "-q", "HEAD", "--", name)
            (repo / name).unlink()
