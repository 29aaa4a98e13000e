"""Memory synced with a git remote: push the memory as git, pull back reviewed commits (docs/memory-git.md).

`sync_git(journal, remote)` exports the working-memory journal (`export_git`, secrets redacted) into a
scratch repository, fetches the remote's `main`, and then:

- the remote has no `main`, or its `main` is a commit of this export: push the export (fast-forward);
- the remote's `main` holds commits made on top of the last waybook commit (a reviewed change): import
  them through the Memory port's rules (`import_git`), then push one sync commit on top of them whose
  tree is the export at the journal's new head and whose trailers name that head;
- the journal also changed since that waybook commit (besides imports of those commits), or the last
  waybook commit is not a head of this journal, or the remote moved during the sync: a
  `SyncConflictError` naming both sides. Nothing is merged, nothing is pushed, nothing is imported;
- the remote's history was rewritten (a force-push): the commit this journal last synced to it is no
  longer in the remote's history, or the remote's last waybook commit holds other notes than this
  journal held at the seq its trailers name (trailers copied over different notes): a
  `SyncConflictError` of kind `rewritten`. Each sync records in the journal where it left the remote
  (`MemorySynced`: the commit and its tree), and the next sync starts by looking for it.

Everything read from the remote is data: a trailer that is not what waybook writes (`Waybook-Seq: two`)
is a `RemoteFormatError` naming the commit, and git's own failures are one-line `GitMemoryError`s.

Every object a push sends is read back and passed through the redaction patterns first: a blob or a
commit message the patterns would change is refused (`SecretLeakError`) and nothing is pushed.

**Which remote.** `sync_git(journal)` without a remote uses the remote this memory last synced with: each
sync that ends with a report records its remote as `remote.origin.url` in the config of the memory's own
sync repository, `$WAYBOOK_HOME/sync/<journal id>.git` (a bare repository, keyed by the journal's header
id, never a repository of the current directory: that is most likely the agent's code, whose `origin`
must never receive memory). A memory that never synced has no remote to find: `NoRemoteError` (the CLI
says to give `--remote URL`).
"""

from __future__ import annotations

import hashlib
import re
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
    one_line,
    run_git,
)
from waybook.journal import SessionJournal, new_id, utc_now
from waybook.memory.tools import waybook_home
from waybook.memory.working import MemoryProjection, MemoryState
from waybook.model import MemorySynced, NewRecord, StaleWriterError
from waybook.projections import replay

IDENTITY_NAME: Final = "waybook"
IDENTITY_EMAIL: Final = "waybook@localhost"
Status = Literal["up-to-date", "pushed", "pulled", "pulled-and-pushed"]
Conflict = Literal["diverged", "foreign", "remote-moved", "rewritten"]
_HEX: Final = frozenset("0123456789abcdef")


class SyncConflictError(GitMemoryError):
    """The journal and the remote both changed, or the remote holds another memory: nothing was merged.

    `kind` is `diverged` (both sides changed since the last waybook commit), `foreign` (the remote's
    history is not this journal's), `remote-moved` (the remote changed during the sync; run it again)
    or `rewritten` (the remote's history no longer holds what this journal synced to it).
    """

    def __init__(self, message: str, *, kind: Conflict, local: int, remote: str | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.local = local
        """The journal's head seq when the sync started."""
        self.remote = remote
        """The remote `main` commit the sync found."""


class NoRemoteError(GitMemoryError):
    """No remote was named and this memory never synced with one: nothing to find, nothing was done."""

    def __init__(self, message: str, *, journal_id: str) -> None:
        super().__init__(message)
        self.journal_id = journal_id


class SecretLeakError(GitMemoryError):
    """An object about to be pushed holds text the redaction patterns would mask; nothing was pushed."""


class RemoteFormatError(GitMemoryError):
    """Something read from the remote is not what waybook writes there (a trailer, an object id)."""


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


def _git(
    directory: Path, *args: str, check: bool = True, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    done = run_git(directory, *args, purpose="sync memory with a remote", stdin=stdin)
    if check and done.returncode != 0:
        msg = f"git {args[0]} failed: {one_line(done.stderr)}"
        raise GitMemoryError(msg)
    return done


def _out(directory: Path, *args: str) -> str:
    return _git(directory, *args).stdout.decode(errors="replace").strip()


def sync_git(journal: SessionJournal, remote: str | None = None) -> SyncReport:
    """Push `journal` (a working-memory journal) to the git `remote` and pull back reviewed commits.

    Without `remote`, the remote this memory last synced with (recorded in its sync repository, see
    `remembered_remote`); NoRemoteError when it never synced."""
    state = replay(MemoryProjection(), journal)
    if state.role != "working_memory":
        msg = f"{journal.name} is not a working-memory journal; sync the journal the agent writes"
        raise GitMemoryError(msg)
    journal_id = state.journal_id or journal.name
    if remote is None:
        remote = remembered_remote(journal_id)
        if remote is None:
            msg = (
                f"no remote is known for memory {journal_id}: it never synced with one. Give remote= (the "
                "first sync records it, and later syncs use it)"
            )
            raise NoRemoteError(msg, journal_id=journal_id)
    elif "://" not in remote and Path(remote).exists():  # a local path, relative to the caller's directory
        remote = str(Path(remote).resolve())
    report = _sync(journal, remote, state)
    _remember_remote(journal_id, remote)
    return report


def sync_repository(journal_id: str) -> Path:
    """The memory's own sync repository: `$WAYBOOK_HOME/sync/<journal id>.git` (the id made safe for a
    file name, with a digest of it so two ids never share one)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", journal_id)[:80]
    tag = hashlib.sha256(journal_id.encode()).hexdigest()[:12]
    return waybook_home() / "sync" / f"{safe}-{tag}.git"


def remembered_remote(journal_id: str) -> str | None:
    """The remote the memory with this header id last synced with, or None (never synced)."""
    repository = sync_repository(journal_id)
    if not (repository / "config").is_file():
        return None
    found = _git(repository, "config", "--get", "remote.origin.url", check=False)
    url = found.stdout.decode().strip()
    return url if found.returncode == 0 and url else None


def _remember_remote(journal_id: str, remote: str) -> None:
    repository = sync_repository(journal_id)
    if not (repository / "config").is_file():
        repository.parent.mkdir(parents=True, exist_ok=True)
        _git(repository.parent, "-c", f"init.defaultBranch={BRANCH}", "init", "-q", "--bare", repository.name)
        _git(repository, "config", "waybook.journal", journal_id)
    if remembered_remote(journal_id) != remote:
        _git(repository, "config", "remote.origin.url", remote)


def _sync(journal: SessionJournal, remote: str, state: MemoryState) -> SyncReport:
    name = Redactor().text(remote)
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
            msg = f"git fetch from {name} failed: {one_line(fetched.stderr)}"
            raise GitMemoryError(msg)
        _check_last_sync(work, journal, name, remote_tip, state.seq)
        local_tip = exported.head
        if remote_tip is None or (local_tip and _is_ancestor(work, remote_tip, local_tip)):
            if remote_tip == local_tip or local_tip is None:
                _record(journal, work, name, remote_tip)
                return SyncReport("up-to-date", 0, (), remote_tip, exported.redacted)
            pushed = _push(work, local_tip, remote_tip, state.seq)
            _record(journal, work, name, local_tip)
            return SyncReport("pushed", pushed, (), local_tip, exported.redacted)
        base_sha, base_seq, base_receipt, reviewed = _reviewed(work, remote_tip, state.journal_id or "")
        _check_base(journal, base_seq, base_receipt, remote_tip, state.seq)
        _check_base_tree(work, base_sha, base_seq, remote_tip, state.seq)
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
            _record(journal, work, name, remote_tip)
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
        _record(journal, work, name, sync_commit)
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


def _reviewed(work: Path, tip: str, journal_id: str) -> tuple[str, int, str, list[str]]:
    """The last waybook commit on the remote's first-parent chain (its id, seq and receipt) and the
    commits made on top of it, oldest first. Every trailer is read as data: anything but what waybook
    writes is a RemoteFormatError naming the commit."""
    keys = ("Waybook-Journal", "Waybook-Seq", "Waybook-Receipt")
    fields = "%x1f".join(f"%(trailers:key={key},valueonly,separator=%x2C)" for key in keys)
    raw = _git(work, "log", "--first-parent", f"--format=%H%x1f{fields}%x1e", tip).stdout
    after: list[str] = []
    for entry in raw.decode("utf-8", errors="replace").split("\x1e"):
        parts = [p.strip() for p in entry.strip("\n").split("\x1f")]
        if len(parts) != 4:
            continue
        sha, journal, seq, receipt = parts
        if not journal:
            after.append(sha)
            continue
        if journal != journal_id:
            msg = (
                f"the remote's main was exported from {journal[:80]!r}, not from {journal_id}; nothing was "
                "merged"
            )
            raise SyncConflictError(msg, kind="foreign", local=0, remote=tip)
        return sha, remote_seq(seq, sha), remote_digest(receipt, sha), list(reversed(after))
    msg = (
        f"the remote's main {tip[:12]} holds no waybook commit (no Waybook-Journal trailer); nothing was "
        "merged"
    )
    raise SyncConflictError(msg, kind="foreign", local=0, remote=tip)


def remote_seq(value: str, commit: str) -> int:
    """A `Waybook-Seq` trailer read from the remote: a whole number, or RemoteFormatError."""
    if not (value.isascii() and value.isdigit()) or len(value) > 19:
        msg = (
            f"the remote's commit {commit[:12]} has the trailer Waybook-Seq {value[:40]!r}, which is not a "
            "seq (a whole number, as waybook writes it); nothing was merged. Fix or drop that commit on "
            "the remote"
        )
        raise RemoteFormatError(msg)
    return int(value)


def remote_digest(value: str, commit: str) -> str:
    """A `Waybook-Receipt` trailer read from the remote: a record digest (64 hex digits)."""
    if len(value) != 64 or not set(value) <= _HEX:
        msg = (
            f"the remote's commit {commit[:12]} has the trailer Waybook-Receipt {value[:40]!r}, which is not "
            "a record digest (64 hex digits); nothing was merged. Fix or drop that commit on the remote"
        )
        raise RemoteFormatError(msg)
    return value


def _check_base(journal: SessionJournal, seq: int, receipt: str, tip: str, head: int) -> None:
    record = next(iter(journal.read(after=seq - 1, limit=1)), None) if seq > 0 else None
    if record is None or record.seq != seq or record.digest != receipt:
        msg = (
            f"the remote's last waybook commit names seq {seq} ({receipt[:12]}), which is not a head of "
            f"{journal.name}: the remote holds another history of this memory; nothing was merged"
        )
        raise SyncConflictError(msg, kind="foreign", local=head, remote=tip)


def _check_base_tree(work: Path, base: str, seq: int, tip: str, head: int) -> None:
    """The remote's last waybook commit must hold the notes this journal held at the seq its trailers
    name: trailers copied over other notes (a rewritten history) are refused."""
    ours = _exported_tree_at(work, seq)
    theirs = _out(work, "rev-parse", f"{base}^{{tree}}")
    if ours != theirs:
        msg = (
            f"the remote's commit {base[:12]} names seq {seq} of this journal but holds other notes than "
            f"the journal held there: the remote's history was rewritten; nothing was merged or pushed. "
            "Inspect the remote; to start it over from this journal, delete its main branch and sync again"
        )
        raise SyncConflictError(msg, kind="rewritten", local=head, remote=tip)


def _exported_tree_at(work: Path, seq: int) -> str | None:
    """The tree of this journal's export at `seq`: its last commit whose Waybook-Seq is at most `seq`."""
    raw = _out(work, "log", "--first-parent", "--format=%T %(trailers:key=Waybook-Seq,valueonly)", BRANCH)
    for line in raw.splitlines():
        tree, _, value = line.partition(" ")
        if value.strip().isdigit() and int(value.strip()) <= seq:
            return tree
    return None


def _last_sync(journal: SessionJournal, name: str) -> MemorySynced | None:
    last = None
    for record in journal.read():
        body = record.body
        if isinstance(body, MemorySynced) and body.remote == name:
            last = body
    return last


def _check_last_sync(work: Path, journal: SessionJournal, name: str, tip: str | None, head: int) -> None:
    """The commit this journal last synced to the remote must still be in the remote's history (an
    empty remote is a fresh start: its main was deleted to sync again from this journal)."""
    last = _last_sync(journal, name)
    if last is None or tip is None or last.commit == tip or _is_ancestor(work, last.commit, tip):
        return
    msg = (
        f"the remote's main {tip[:12]} no longer holds commit {last.commit[:12]}, where this journal's last "
        f"sync left it (seq {last.seq}): the remote's history was rewritten (a force-push); nothing was "
        "merged or pushed. Inspect the remote; to start it over from this journal, delete its main branch "
        "and sync again"
    )
    raise SyncConflictError(msg, kind="rewritten", local=head, remote=tip)


def _record(journal: SessionJournal, work: Path, name: str, commit: str | None) -> None:
    """Record in the journal where the sync left the remote (its commit and tree), unless it is where
    the last sync left it: the next sync checks the remote still holds it."""
    if commit is None:
        return
    last = _last_sync(journal, name)
    if last is not None and last.commit == commit:
        return
    tree = _out(work, "rev-parse", f"{commit}^{{tree}}")
    for _ in range(3):  # an agent writing meanwhile moves the head: read it again
        head = journal.head()
        body = MemorySynced(remote=name, commit=commit, tree=tree, seq=head.seq)
        try:
            journal.append([NewRecord(id=new_id(), at=utc_now(), body=body)], expected=head)
        except StaleWriterError:
            continue
        return


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
    done = run_git(
        work,
        *("commit-tree", tree, "-p", parent, "-F", "-"),
        purpose="sync memory with a remote",
        stdin=message.encode(),
        env={
            "GIT_AUTHOR_DATE": f"{when} +0000",
            "GIT_COMMITTER_DATE": f"{when} +0000",
            "GIT_AUTHOR_NAME": IDENTITY_NAME,
            "GIT_AUTHOR_EMAIL": IDENTITY_EMAIL,
            "GIT_COMMITTER_NAME": IDENTITY_NAME,
            "GIT_COMMITTER_EMAIL": IDENTITY_EMAIL,
        },
    )
    if done.returncode != 0:
        msg = f"git commit-tree failed: {one_line(done.stderr)}"
        raise GitMemoryError(msg)
    return done.stdout.decode().strip()


def _push(work: Path, commit: str, remote_tip: str | None, head: int) -> int:
    """Check every object the push sends against the redaction patterns, then push it as `main`."""
    span = [commit] if remote_tip is None else [commit, "--not", remote_tip]
    commits = _out(work, "rev-list", *span).split()
    objects = [line.split(" ", 1)[0] for line in _out(work, "rev-list", "--objects", *span).splitlines()]
    listing = "\n".join(objects) + "\n"
    done = _git(work, "cat-file", "--batch", stdin=listing.encode())
    _check_objects(done.stdout)
    lease = f"--force-with-lease=refs/heads/{BRANCH}:{remote_tip or ''}"
    pushed = _git(work, "push", "-q", lease, "origin", f"{commit}:refs/heads/{BRANCH}", check=False)
    if pushed.returncode != 0:
        why = one_line(pushed.stderr)
        if "stale info" in why or "fetch first" in why or "non-fast-forward" in why:
            msg = (
                f"the remote's main moved during the sync (it was {str(remote_tip)[:12]}); nothing of this "
                f"sync was pushed. Run the sync again ({why})"
            )
            raise SyncConflictError(msg, kind="remote-moved", local=head, remote=remote_tip)
        msg = f"the remote refused the push; nothing of this sync was pushed ({why})"
        raise GitMemoryError(msg)
    return len(commits)


def _check_objects(stream: bytes) -> None:
    index = 0
    redactor = Redactor()
    while index < len(stream):
        end = stream.index(b"\n", index)
        header = stream[index:end].decode(errors="replace").split(" ")
        if len(header) != 3 or not header[2].isdigit():
            answer = " ".join(header)[:80]
            msg = f"git cat-file answered {answer!r} for an object of the push; nothing was pushed"
            raise GitMemoryError(msg)
        sha, kind, size = header
        body = stream[end + 1 : end + 1 + int(size)]
        index = end + 1 + int(size) + 1
        if kind not in ("blob", "commit"):
            continue
        text = body.decode("utf-8", errors="replace")
        if redactor.text(text) != text:
            msg = f"{kind} {sha[:12]} holds text the redaction patterns mask; nothing was pushed"
            raise SecretLeakError(msg)


__all__ = [
    "NoRemoteError",
    "RemoteFormatError",
    "SecretLeakError",
    "SyncConflictError",
    "SyncReport",
    "remembered_remote",
    "sync_git",
    "sync_repository",
]
