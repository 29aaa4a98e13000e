"""Shared by the memory sync tests: a bare remote and a reviewer who clones it, edits and pushes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


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


def review(remote: Path, clone: Path, edits: dict[str, str | None], message: str = "reviewed") -> str:
    """A reviewer's commit on the remote's main (text None: delete the file); the clone is made once and
    reused. Returns the commit id."""
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", str(remote), str(clone)], env=ENV, check=True)
    else:
        git(clone, "pull", "-q", "origin", "main")
    for path, text in edits.items():
        if text is None:
            (clone / path).unlink()
            continue
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=rev", "-c", "user.email=r@example.invalid", "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", "HEAD:main")
    return git(clone, "rev-parse", "HEAD").strip()


def tree(remote: Path) -> list[str]:
    return sorted(git(remote, "ls-tree", "-r", "--name-only", "main").split())
