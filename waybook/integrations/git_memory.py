"""Memory as a git repository: export a memory journal as commits, import commits made on it.

`export_git(journal, directory)` writes one commit per memory record (after the header), on branch
`main`, with the files under `memories/`, secrets redacted, and message trailers `Waybook-Journal`,
`Waybook-Seq` and `Waybook-Receipt` (the record's digest). Author and committer are `waybook` at the
record's time, so the same journal always gives the same commit ids.

`import_git(directory, journal)` takes the commits made on top of the last exported commit (first
parent, oldest first) and writes each as one batch through the Memory port's rules under the request id
`git-<commit id>`; a commit already imported is skipped, so an import can be repeated. The journal must
not have moved since the export except by such imports.

This drives the git program (`git fast-import`, `log`, `diff-tree`, `cat-file`): it is the reference
implementation of the format, is on every machine that uses git, and needs no extra dependency; a library
(dulwich, pygit2) would add one for what a few plumbing commands do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Final

import attrs

from waybook._redact import Redactor
from waybook.journal._protocol import SessionJournal
from waybook.memory.working._port import Memory
from waybook.memory.working._state import MemoryProjection
from waybook.model._errors import JournalError
from waybook.model._records import (
    Header,
    MemoryAdoption,
    MemoryDelete,
    MemoryRename,
    MemoryWrite,
    Record,
)
from waybook.projections._base import replay

BRANCH: Final = "main"
PREFIX: Final = "memories/"
IDENTITY: Final = "waybook <waybook@localhost>"
TRAILERS: Final = ("Waybook-Journal", "Waybook-Seq", "Waybook-Receipt")


class GitMemoryError(JournalError):
    """The git repository or the memory journal is not in a state to export to or import from."""


@attrs.frozen
class ExportReport:
    commits: int
    redacted: int
    head: str | None


@attrs.frozen
class ImportReport:
    imported: tuple[str, ...]
    skipped: tuple[str, ...]


def _git(directory: Path, *args: str, stdin: bytes | None = None) -> bytes:
    if shutil.which("git") is None:
        msg = "the git program is not installed; install git to export or import memory repositories"
        raise GitMemoryError(msg)
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    done = subprocess.run(
        ["git", "-C", str(directory), *args], input=stdin, capture_output=True, env=env, check=False
    )
    if done.returncode != 0:
        msg = f"git {args[0]} failed in {directory}: {done.stderr.decode(errors='replace').strip()}"
        raise GitMemoryError(msg)
    return done.stdout


# --- export -----------------------------------------------------------------------------------------


def export_git(journal: SessionJournal, directory: str | Path) -> ExportReport:
    """A new git repository at `directory` (missing or empty) holding the memory journal's history."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        msg = f"{target} exists and is not an empty directory; export into a new directory"
        raise GitMemoryError(msg)
    records = list(journal.read())
    if (
        not records
        or not isinstance(records[0].body, Header)
        or records[0].body.role
        not in (
            "working_memory",
            "canonical_memory",
        )
    ):
        msg = f"{journal.name} is not a memory journal (its header must declare a memory role)"
        raise GitMemoryError(msg)
    journal_id = records[0].body.journal
    target.mkdir(parents=True, exist_ok=True)
    _git(target, "-c", f"init.defaultBranch={BRANCH}", "init", "-q")
    redactor = Redactor()
    texts: dict[str, str] = {}
    stream = bytearray()
    for mark, record in enumerate(records[1:], start=1):
        stream += _commit(mark, record, journal_id, texts, redactor)
    if stream:
        _git(target, "fast-import", "--quiet", "--done", stdin=bytes(stream) + b"done\n")
        _git(target, "checkout", "-q", "-f", BRANCH)
        head = _git(target, "rev-parse", "HEAD").decode().strip()
    else:
        head = None
    return ExportReport(commits=len(records) - 1, redacted=redactor.total, head=head)


def _commit(mark: int, record: Record, journal_id: str, texts: dict[str, str], redactor: Redactor) -> bytes:
    body = record.body
    changes = bytearray()
    if isinstance(body, MemoryWrite):
        subject = f"{body.command} {body.path}"
        texts[body.path] = redactor.text(body.text)
        changes += _put(body.path, texts[body.path], redactor)
    elif isinstance(body, MemoryDelete):
        subject = f"{body.reason} {', '.join(body.directories or body.paths)}"  # git keeps no empty dirs
        for path in body.paths:
            texts.pop(path, None)
            changes += f"D {_repo_path(path, redactor)}\n".encode()
    elif isinstance(body, MemoryRename):
        subject = "rename " + ", ".join(f"{a} -> {b}" for a, b in body.directories or body.moves)
        moved = {old: texts.pop(old, "") for old, _ in body.moves}
        for old, new in body.moves:
            changes += f"D {_repo_path(old, redactor)}\n".encode()
            texts[new] = moved[old]
            changes += _put(new, texts[new], redactor)
    elif isinstance(body, MemoryAdoption):
        subject = f"adopt {body.nomination[:12]} by {body.actor}"
    else:
        subject = body.KIND
    call_id = getattr(body, "call_id", None)
    lines = [redactor.text(subject), ""]
    if call_id:
        lines += [f"Tool call: {redactor.text(call_id)}", ""]
    lines += [
        f"Waybook-Journal: {journal_id}",
        f"Waybook-Seq: {record.seq}",
        f"Waybook-Receipt: {record.digest}",
    ]
    message = ("\n".join(lines) + "\n").encode()
    when = int(datetime.fromisoformat(record.at.replace("Z", "+00:00")).timestamp())
    head = [
        f"commit refs/heads/{BRANCH}",
        f"mark :{mark}",
        f"author {IDENTITY} {when} +0000",
        f"committer {IDENTITY} {when} +0000",
        f"data {len(message)}",
    ]
    out = ("\n".join(head) + "\n").encode() + message
    if mark > 1:
        out += f"from :{mark - 1}\n".encode()
    return out + bytes(changes) + b"\n"


def _put(path: str, text: str, redactor: Redactor) -> bytes:
    data = text.encode("utf-8")
    return f"M 100644 inline {_repo_path(path, redactor)}\ndata {len(data)}\n".encode() + data + b"\n"


def _repo_path(path: str, redactor: Redactor) -> str:
    """`memories/...`, with a secret a path may spell masked (such a file cannot be imported back)."""
    return redactor.text(path).removeprefix("/")


# --- import -----------------------------------------------------------------------------------------


def import_git(directory: str | Path, journal: SessionJournal) -> ImportReport:
    """Write the commits made on the exported repository into the memory journal, one batch each.

    A commit the port (or the checks here) refuses is not imported alone: its changes go in with the
    commits after it, so a reviewer fixes a refused commit with a new one. Each batch is conditional on
    the notes it changes still holding what the journal held when the import checked it (an agent
    write to one of them meanwhile is refused, never overwritten)."""
    source = Path(directory)
    if not (source / ".git").exists():
        msg = f"{source} is not a git repository; give the directory waybook memory export-git made"
        raise GitMemoryError(msg)
    state = replay(MemoryProjection(), journal)
    if state.role != "working_memory" or state.scope is None:
        msg = f"{journal.name} is not a working-memory journal; import into the journal that was exported"
        raise GitMemoryError(msg)
    commits = _history(source)
    exported = [i for i, (_, trailers) in enumerate(commits) if trailers.get("Waybook-Journal")]
    if not exported:
        msg = f"{source} holds no commit exported by waybook (no Waybook-Journal trailer)"
        raise GitMemoryError(msg)
    base_sha, base = commits[exported[-1]]
    if base.get("Waybook-Journal") != state.journal_id:
        msg = f"{source} was exported from {base.get('Waybook-Journal')}, not from {state.journal_id}"
        raise GitMemoryError(msg)
    new = [sha for sha, _ in commits[exported[-1] + 1 :]]
    checked = _check_base(journal, _seq(base.get("Waybook-Seq", "0")), base.get("Waybook-Receipt", ""), new)
    memory = Memory(journal, scope=state.scope)
    known = replay(MemoryProjection(), journal, at=checked)
    done = [i for i, sha in enumerate(new) if f"git-{sha}" in known.requests]
    skipped = tuple(new[: done[-1] + 1]) if done else ()
    base_of_fresh = skipped[-1] if skipped else base_sha
    planned = _plan(source, base_of_fresh, new[len(skipped) :])  # every commit read before any is written
    parent = base_of_fresh
    imported: list[str] = []
    refused: tuple[str, str] | None = None
    for sha, since, changes in planned:
        writes, deletes, moves = changes if since == parent else _changes(source, parent, sha)
        touched = {*writes, *deletes, *(p for move in moves for p in move)}
        expected = {p: (known.files[p].digest if p in known.files else None) for p in touched}
        result = memory.write_changes(
            writes=writes,
            deletes=deletes,
            moves=moves,
            call_id=f"git-{sha}",
            command="import_git",
            expected=expected,
        )
        if not result.ok:
            assert result.error is not None
            if result.error.code in ("CONFLICT", "STORAGE_ERROR", "UNSAFE_STORAGE"):
                msg = (
                    f"commit {sha[:12]} was not imported ({result.error.code}): {result.error.message}; "
                    "the commits before it were imported. Run the import again"
                )
                raise GitMemoryError(msg)
            refused = refused or (sha, f"({result.error.code}): {result.error.message}")
            continue  # its changes go in with the next commit's, from the same parent
        assert result.receipt is not None
        imported.append(sha)
        refused, parent = None, sha
        known = replay(MemoryProjection(), journal, at=result.receipt.seq)
    if refused is not None:
        sha, why = refused
        msg = (
            f"commit {sha[:12]} was refused {why}; the commits before it were imported. Fix it with a new "
            "commit and import again (the fix is imported together with it)"
        )
        raise GitMemoryError(msg)
    return ImportReport(tuple(imported), skipped)


def _plan(source: Path, parent: str, fresh: list[str]) -> list[tuple[str, str, Changes]]:
    """Each commit's changes from the commit before it (sha, parent, changes). A commit the checks here
    refuse (a symlink, a file outside memories/, text that is not UTF-8) is read together with the
    commits after it, so a later commit can fix it; if the last still leaves it refused, GitMemoryError
    before anything is written."""
    planned: list[tuple[str, str, Changes]] = []
    refused: GitMemoryError | None = None
    for sha in fresh:
        try:
            planned.append((sha, parent, _changes(source, parent, sha)))
        except GitMemoryError as exc:
            refused = refused or exc
            continue
        refused, parent = None, sha
    if refused is not None:
        msg = f"{refused}; nothing was imported"
        raise GitMemoryError(msg) from refused
    return planned


def _seq(value: str) -> int:
    """A `Waybook-Seq` trailer's seq; anything but a whole number is a typed error, never a traceback."""
    if not value.isdigit():
        msg = f"the Waybook-Seq trailer {value[:40]!r} is not a seq (a whole number); export again"
        raise GitMemoryError(msg)
    return int(value)


def _history(source: Path) -> list[tuple[str, dict[str, str]]]:
    fields = "%x1f".join(f"%(trailers:key={key},valueonly,separator=%x2C)" for key in TRAILERS)
    raw = _git(source, "log", "--first-parent", "--reverse", f"--format=%H%x1f{fields}%x1e", "HEAD")
    commits = []
    for entry in raw.decode().split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) != 1 + len(TRAILERS):
            continue
        trailers = {
            key: value.strip() for key, value in zip(TRAILERS, parts[1:], strict=True) if value.strip()
        }
        commits.append((parts[0], trailers))
    return commits


def _check_base(journal: SessionJournal, seq: int, receipt: str, new: list[str]) -> int:
    """The journal must hold the exported record at `seq`, and nothing after it but imports of `new`
    (reflection bookkeeping aside: it changes no note). Returns the head seq it checked."""
    records = list(journal.read(after=seq - 1)) if seq > 0 else []
    if not records or records[0].digest != receipt:
        msg = (
            f"{journal.name} has no record {receipt[:12]} at seq {seq}: the repository was not exported "
            "from this journal as it is"
        )
        raise GitMemoryError(msg)
    ours = {f"git-{sha}" for sha in new}
    for record in records[1:]:
        if is_memory_operation(record.body) and getattr(record.body, "call_id", None) not in ours:
            msg = (
                f"{journal.name} changed after the export (seq {record.seq}); export again into a new "
                "directory and redo the commits there"
            )
            raise GitMemoryError(msg)
    return records[-1].seq


def is_memory_operation(body: object) -> bool:
    """Whether a record changes memory (a write, delete, rename or adoption), as reflection's do not."""
    return isinstance(body, MemoryWrite | MemoryDelete | MemoryRename | MemoryAdoption)


Changes = tuple[dict[str, str], tuple[str, ...], tuple[tuple[str, str], ...]]
FILE_MODES: Final = ("100644", "100755")


def _changes(source: Path, parent: str, sha: str) -> Changes:
    """The writes, deletes and moves of one commit; anything but a regular file is refused (a symlink
    would otherwise import its target's name as the note's text, a submodule a commit id)."""
    raw = _git(source, "diff-tree", "-r", "-M", "-z", "--no-commit-id", "--raw", parent, sha)
    items = raw.decode("utf-8", errors="surrogateescape").split("\0")
    writes: dict[str, str] = {}
    deletes: list[str] = []
    moves: list[tuple[str, str]] = []
    index = 0
    while index < len(items) and items[index]:
        _old_mode, new_mode, _old_blob, new_blob, status = items[index].lstrip(":").split(" ")
        renamed = status.startswith(("R", "C"))
        paths = items[index + 1 : index + (3 if renamed else 2)]
        index += 1 + len(paths)
        if status != "D" and new_mode not in FILE_MODES:
            kind = {"120000": "a symbolic link", "160000": "a submodule"}.get(new_mode, f"mode {new_mode}")
            msg = (
                f"{paths[-1]} in commit {sha[:12]} is {kind}; memory holds regular files only. Replace "
                "it with a file in a new commit and import again"
            )
            raise GitMemoryError(msg)
        if status.startswith("C"):
            writes[_memory_path(paths[1])] = _blob(source, new_blob, sha, paths[1])
        elif renamed:
            moves.append((_memory_path(paths[0]), _memory_path(paths[1])))
            if status != "R100":
                writes[_memory_path(paths[1])] = _blob(source, new_blob, sha, paths[1])
        elif status == "D":
            deletes.append(_memory_path(paths[0]))
        else:
            writes[_memory_path(paths[0])] = _blob(source, new_blob, sha, paths[0])
    return writes, tuple(deletes), tuple(moves)


def _memory_path(path: str) -> str:
    if not path.startswith(PREFIX):
        msg = f"{path} is outside memories/; only files under memories/ are memory"
        raise GitMemoryError(msg)
    return "/" + path


def _blob(source: Path, blob: str, sha: str, path: str) -> str:
    data = _git(source, "cat-file", "blob", blob)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        msg = f"{path} in commit {sha[:12]} is not UTF-8 text; memory holds text only"
        raise GitMemoryError(msg) from None


__all__ = ["ExportReport", "GitMemoryError", "ImportReport", "export_git", "import_git"]
