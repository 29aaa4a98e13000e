"""Memory synced with a git remote: push the memory as git, pull back reviewed commits (docs/memory-git.md).

`sync_git(journal, remote)` exports the working-memory journal (`export_git`, secrets redacted) into a
scratch repository, fetches the remote's `main`, and then:

- the remote has no `main`, or its `main` is a commit of this export: push the export (fast-forward);
- the remote's `main` holds commits made on top of the last waybook commit (a reviewed change): import
  them through the Memory port's rules (`import_git`), then push one sync commit on top of them whose
  tree is the export at the journal's new head and whose trailers name that head;
- the journal also changed since that waybook commit (besides imports of those commits), or the last
  waybook commit is not a head of this journal, or the remote moved during the sync: a
  `SyncConflictError` naming both sides. Nothing is merged, nothing is pushed, nothing is imported.

Every object a push sends is read back and passed through the redaction patterns first: a blob or a
commit message the patterns would change is refused (`SecretLeakError`) and nothing is pushed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

import attrs

from waybook._redact import Redactor
from waybook.integrations.git_memory import (
    BRANCH,
    GitMemoryError,
    export_git,
    import_git,
    is_memory_operation,
)
from waybook.journal._protocol import SessionJournal
from waybook.memory.working._state import MemoryProjection
from waybook.projections._base import replay

IDENTITY_NAME: Final = "waybook"
IDENTITY_EMAIL: Final = "waybook@localhost"
Status = Literal["up-to-date", "pushed", "pulled", "pulled-and-pushed"]
Conflict = Literal["diverged", "foreign", "remote-moved"]


class SyncConflictError(GitMemoryError):
    """The journal and the remote both changed, or the remote holds another memory: nothing was merged.

    `kind` is `diverged` (both sides changed since the last waybook commit), `foreign` (the remote's
    history is not this journal's) or `remote-moved` (the remote changed during the sync; run it again).
    """

    def __init__(self, message: str, *, kind: Conflict, local: int, remote: str | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.local = local
        """The journal's head seq when the sync started."""
        self.remote = remote
        """The remote `main` commit the sync found."""


class SecretLeakError(GitMemoryError):
    """An object about to be pushed holds text the redaction patterns would mask; nothing was pushed."""


@attrs.frozen
class SyncReport:
    status: Status
    pushed: int
    """Commits sent to the remote."""
    imported: tuple[str, ...]
    """Remote commits written into the journal (their ids)."""
    remote_head: str | None
    """The remote's `main` after the sync."""
    redacted: int
    """Secrets the export masked."""


def _git(directory: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    if shutil.which("git") is None:
        msg = "the git program is not installed; install git to sync memory with a remote"
        raise GitMemoryError(msg)
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, env=env, check=False)
    if check and done.returncode != 0:
        msg = f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}"
        raise GitMemoryError(msg)
    return done


def _out(directory: Path, *args: str) -> str:
    return _git(directory, *args).stdout.decode().strip()


def sync_git(journal: SessionJournal, remote: str) -> SyncReport:
    """Push `journal` (a working-memory journal) to the git `remote` and pull back reviewed commits."""
    if "://" not in remote and Path(remote).exists():  # a local path, relative to the caller's directory
        remote = str(Path(remote).resolve())
    state = replay(MemoryProjection(), journal)
    if state.role != "working_memory":
        msg = f"{journal.name} is not a working-memory journal; sync the journal the agent writes"
        raise GitMemoryError(msg)
    with tempfile.TemporaryDirectory(prefix="waybook-sync-") as scratch:
        work = Path(scratch) / "memory"
        exported = export_git(journal, work)
        _git(work, "remote", "add", "origin", remote)
        fetched = _git(
            work, "fetch", "-q", "origin", f"+refs/heads/{BRANCH}:refs/remotes/origin/{BRANCH}", check=False
        )
        remote_tip = (
            _out(work, "rev-parse", f"refs/remotes/origin/{BRANCH}") if fetched.returncode == 0 else None
        )
        if fetched.returncode != 0 and not _remote_is_empty(work):
            msg = f"git fetch failed: {fetched.stderr.decode(errors='replace').strip()}"
            raise GitMemoryError(msg)
        local_tip = exported.head
        if remote_tip is None or (local_tip and _is_ancestor(work, remote_tip, local_tip)):
            if remote_tip == local_tip:
                return SyncReport("up-to-date", 0, (), remote_tip, exported.redacted)
            if local_tip is None:
                return SyncReport("up-to-date", 0, (), remote_tip, exported.redacted)
            pushed = _push(work, local_tip, remote_tip, state.seq)
            return SyncReport("pushed", pushed, (), local_tip, exported.redacted)
        base_seq, base_receipt, reviewed = _reviewed(work, remote_tip, state.journal_id or "")
        _check_base(journal, base_seq, base_receipt, remote_tip, state.seq)
        requests = state.requests
        done = [i for i, sha in enumerate(reviewed) if f"git-{sha}" in requests]
        fresh = reviewed[done[-1] + 1 :] if done else reviewed  # a refused commit goes in with its fix
        ours = {f"git-{sha}" for sha in reviewed}
        local_changes = [
            r.seq
            for r in journal.read(after=base_seq)
            if is_memory_operation(r.body) and getattr(r.body, "call_id", None) not in ours
        ]  # reflection bookkeeping changes no note: it never makes a review unpullable
        if local_changes and fresh:
            msg = (
                f"the journal changed after the remote's last waybook commit (seq {base_seq}; new records "
                f"from seq {local_changes[0]}) and the remote's main {remote_tip[:12]} holds "
                f"{len(fresh)} commits on top of it not yet imported; nothing was merged. Import the "
                "remote's commits into a journal at that seq, or redo them on a fresh export"
            )
            raise SyncConflictError(msg, kind="diverged", local=state.seq, remote=remote_tip)
        imported: tuple[str, ...] = ()
        if fresh:
            _git(work, "checkout", "-q", "--detach", remote_tip)
            imported = import_git(work, journal).imported
        after = replay(MemoryProjection(), journal)
        moved = any(is_memory_operation(r.body) for r in journal.read(after=base_seq))
        if not moved:  # the remote already holds these notes (later records change none)
            return SyncReport(
                "pulled" if imported else "up-to-date", 0, imported, remote_tip, exported.redacted
            )
        again = Path(scratch) / "again"
        redone = export_git(journal, again)
        assert redone.head is not None
        tree = _out(again, "rev-parse", f"{redone.head}^{{tree}}")
        _git(work, "fetch", "-q", str(again), BRANCH)
        sync_commit = _commit_tree(
            work, tree, remote_tip, journal, after.journal_id or "", after.seq, after.digest
        )
        pushed = _push(work, sync_commit, remote_tip, state.seq)
        return SyncReport(
            "pulled-and-pushed" if imported else "pushed",
            pushed,
            imported,
            sync_commit,
            exported.redacted + redone.redacted,
        )


def _remote_is_empty(work: Path) -> bool:
    done = _git(work, "ls-remote", "--heads", "origin", check=False)
    return done.returncode == 0 and not done.stdout.strip()


def _is_ancestor(work: Path, older: str, newer: str) -> bool:
    return _git(work, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def _reviewed(work: Path, tip: str, journal_id: str) -> tuple[int, str, list[str]]:
    """The last waybook commit on the remote's first-parent chain (its seq and receipt) and the commits
    made on top of it, oldest first."""
    keys = ("Waybook-Journal", "Waybook-Seq", "Waybook-Receipt")
    fields = "%x1f".join(f"%(trailers:key={key},valueonly,separator=%x2C)" for key in keys)
    raw = _out(work, "log", "--first-parent", f"--format=%H%x1f{fields}%x1e", tip)
    after: list[str] = []
    for entry in raw.split("\x1e"):
        parts = [p.strip() for p in entry.strip("\n").split("\x1f")]
        if len(parts) != 4:
            continue
        sha, journal, seq, receipt = parts
        if not journal:
            after.append(sha)
            continue
        if journal != journal_id:
            msg = f"the remote's main was exported from {journal}, not from {journal_id}; nothing was merged"
            raise SyncConflictError(msg, kind="foreign", local=0, remote=tip)
        return int(seq or 0), receipt, list(reversed(after))
    msg = (
        f"the remote's main {tip[:12]} holds no waybook commit (no Waybook-Journal trailer); nothing was "
        "merged"
    )
    raise SyncConflictError(msg, kind="foreign", local=0, remote=tip)


def _check_base(journal: SessionJournal, seq: int, receipt: str, tip: str, head: int) -> None:
    record = next(iter(journal.read(after=seq - 1, limit=1)), None) if seq > 0 else None
    if record is None or record.seq != seq or record.digest != receipt:
        msg = (
            f"the remote's last waybook commit names seq {seq} ({receipt[:12]}), which is not a head of "
            f"{journal.name}: the remote holds another history of this memory; nothing was merged"
        )
        raise SyncConflictError(msg, kind="foreign", local=head, remote=tip)


def _commit_tree(
    work: Path, tree: str, parent: str, journal: SessionJournal, journal_id: str, seq: int, digest: str
) -> str:
    last = next(iter(journal.read(after=seq - 1, limit=1)))
    when = int(datetime.fromisoformat(last.at.replace("Z", "+00:00")).timestamp())
    redactor = Redactor()
    message = redactor.text(
        f"sync memory at seq {seq}\n\nWaybook-Journal: {journal_id}\nWaybook-Seq: {seq}\n"
        f"Waybook-Receipt: {digest}\n"
    )
    done = subprocess.run(
        ["git", "-C", str(work), "commit-tree", tree, "-p", parent, "-F", "-"],
        input=message.encode(),
        capture_output=True,
        env={
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_DATE": f"{when} +0000",
            "GIT_COMMITTER_DATE": f"{when} +0000",
            "GIT_AUTHOR_NAME": IDENTITY_NAME,
            "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
            "GIT_COMMITTER_NAME": IDENTITY_NAME,
            "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
        },
        check=False,
    )
    if done.returncode != 0:
        msg = f"git commit-tree failed: {done.stderr.decode(errors='replace').strip()}"
        raise GitMemoryError(msg)
    return done.stdout.decode().strip()


def _push(work: Path, commit: str, remote_tip: str | None, head: int) -> int:
    """Check every object the push sends against the redaction patterns, then push it as `main`."""
    span = [commit] if remote_tip is None else [commit, "--not", remote_tip]
    commits = _out(work, "rev-list", *span).split()
    objects = [line.split(" ", 1)[0] for line in _out(work, "rev-list", "--objects", *span).splitlines()]
    listing = "\n".join(objects) + "\n"
    done = subprocess.run(
        ["git", "-C", str(work), "cat-file", "--batch"],
        input=listing.encode(),
        capture_output=True,
        check=True,
    )
    _check_objects(done.stdout)
    lease = f"--force-with-lease=refs/heads/{BRANCH}:{remote_tip or ''}"
    pushed = _git(work, "push", "-q", lease, "origin", f"{commit}:refs/heads/{BRANCH}", check=False)
    if pushed.returncode != 0:
        msg = (
            f"the remote's main moved during the sync (it was {str(remote_tip)[:12]}); nothing of this "
            f"sync was pushed. Run the sync again ({pushed.stderr.decode(errors='replace').strip()})"
        )
        raise SyncConflictError(msg, kind="remote-moved", local=head, remote=remote_tip)
    return len(commits)


def _check_objects(stream: bytes) -> None:
    index = 0
    redactor = Redactor()
    while index < len(stream):
        end = stream.index(b"\n", index)
        sha, kind, size = stream[index:end].decode().split(" ")
        body = stream[end + 1 : end + 1 + int(size)]
        index = end + 1 + int(size) + 1
        if kind not in ("blob", "commit"):
            continue
        text = body.decode("utf-8", errors="replace")
        if redactor.text(text) != text:
            msg = f"{kind} {sha[:12]} holds text the redaction patterns mask; nothing was pushed"
            raise SecretLeakError(msg)


__all__ = ["SecretLeakError", "SyncConflictError", "SyncReport", "sync_git"]
