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
import sys
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Final

import attrs

from waybook._redact import Redactor
from waybook.journal import SessionJournal, front_matter, front_matter_problems
from waybook.journal._roles.memory_paths import PathError, check_extension, normalize
from waybook.memory.working import Memory, MemoryProjection
from waybook.model import (
    Header,
    JournalError,
    MemoryAdoption,
    MemoryDelete,
    MemoryRename,
    MemoryWrite,
    Record,
)
from waybook.projections import replay

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


def run_git(
    directory: Path,
    *args: str,
    purpose: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git -C directory args` (with `env` added to the environment), apart from the user's and the
    system's git configuration and never prompting; GitMemoryError, saying what git is needed for
    (`purpose`), where git is not installed."""
    if shutil.which("git") is None:
        msg = f"the git program is not installed; install git to {purpose}"
        raise GitMemoryError(msg)
    isolated = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        **(env or {}),
    }
    return subprocess.run(
        ["git", "-C", str(directory), *args], input=stdin, capture_output=True, env=isolated, check=False
    )


def _git(directory: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = run_git(directory, *args, purpose="export or import memory repositories", stdin=stdin)
    if done.returncode != 0:
        msg = f"git {args[0]} failed in {directory}: {one_line(done.stderr)}"
        raise GitMemoryError(msg)
    return done.stdout


def one_line(stderr: bytes, limit: int = 400) -> str:
    """git's error text on one line (it writes several: `fatal: ...`, hints, a remote's hook output)."""
    text = " ".join(stderr.decode(errors="replace").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    operations = _operations(records[1:])
    redactor = Redactor()
    _check_masked_names(operations, redactor)  # before anything is written
    target.mkdir(parents=True, exist_ok=True)
    _git(target, "-c", f"init.defaultBranch={BRANCH}", "init", "-q")
    install_hook(target, require_description=records[0].body.metadata.get("require_description") is True)
    texts: dict[str, str] = {}
    stream = bytearray()
    for mark, operation in enumerate(operations, start=1):
        stream += _commit(mark, operation, journal_id, texts, redactor)
    if stream:
        _git(target, "fast-import", "--quiet", "--done", stdin=bytes(stream) + b"done\n")
        _git(target, "checkout", "-q", "-f", BRANCH)
        head = _git(target, "rev-parse", "HEAD").decode().strip()
    else:
        head = None
    return ExportReport(commits=len(operations), redacted=redactor.total, head=head)


def _operations(records: list[Record]) -> list[list[Record]]:
    """The memory operations of a journal, one per batch (a record's `batch` place says where its batch
    ends; a record appended alone is one). Records that change no note (reflection bookkeeping) are
    left out: they are no memory operation."""
    operations: list[list[Record]] = []
    current: list[Record] = []
    for record in records:
        if not is_memory_operation(record.body):
            continue
        current.append(record)
        if record.batch is None or record.batch[0] == record.batch[1]:
            operations.append(current)
            current = []
    if current:
        operations.append(current)
    return operations


class MaskedNameError(GitMemoryError):
    """Two notes whose paths differ only in secrets the export masks would become one git path."""


def _check_masked_names(operations: list[list[Record]], redactor: Redactor) -> None:
    """Refuse an export where two notes held at one time mask to the same repository path (a deleted
    one would delete the other in git); nothing is written, so nothing is pushed."""
    held: dict[str, str] = {}  # repository path -> the memory path that holds it now
    probe = Redactor()
    for operation in operations:
        for record in operation:
            body = record.body
            gone = [*body.paths] if isinstance(body, MemoryDelete) else []
            gone += [old for old, _ in body.moves] if isinstance(body, MemoryRename) else []
            for path in gone:
                held.pop(_repo_path(path, probe), None)
            came = [body.path] if isinstance(body, MemoryWrite) else []
            came += [new for _, new in body.moves] if isinstance(body, MemoryRename) else []
            for path in came:
                repo = _repo_path(path, probe)
                other = held.setdefault(repo, path)
                if other != path:
                    msg = (
                        f"two notes would both be {repo} in git once secrets are masked (seq {record.seq}): "
                        f"{redactor.text(other)} and {redactor.text(path)} differ only in masked text. "
                        "Nothing was exported or pushed; rename one of them"
                    )
                    raise MaskedNameError(msg)


def _commit(
    mark: int, operation: list[Record], journal_id: str, texts: dict[str, str], redactor: Redactor
) -> bytes:
    """One commit for one memory operation: every file it changes, as the operation leaves it."""
    changes: dict[str, str | None] = {}  # repository path -> text, or None for a delete
    subjects: list[str] = []
    for record in operation:
        body = record.body
        if isinstance(body, MemoryWrite):
            subjects.append(f"{body.command} {body.path}")
            texts[body.path] = redactor.text(body.text)
            changes[_repo_path(body.path, redactor)] = texts[body.path]
        elif isinstance(body, MemoryDelete):
            subjects.append(
                f"{body.reason} {', '.join(body.directories or body.paths)}"
            )  # git keeps no empty dirs
            for path in body.paths:
                texts.pop(path, None)
                changes[_repo_path(path, redactor)] = None
        elif isinstance(body, MemoryRename):
            subjects.append("rename " + ", ".join(f"{a} -> {b}" for a, b in body.directories or body.moves))
            moved = {old: texts.pop(old, "") for old, _ in body.moves}
            for old, new in body.moves:
                changes[_repo_path(old, redactor)] = None
                texts[new] = moved[old]
                changes[_repo_path(new, redactor)] = texts[new]
        elif isinstance(body, MemoryAdoption):
            subjects.append(f"adopt {body.nomination[:12]} by {body.actor}")
    last = operation[-1]
    call_id = next((c for r in operation if isinstance(c := getattr(r.body, "call_id", None), str)), None)
    opened = operation[0].body
    subject = subjects[0] if isinstance(opened, MemoryAdoption) or len(subjects) == 1 else "; ".join(subjects)
    lines = [redactor.text(subject), ""]
    if call_id:
        lines += [f"Tool call: {redactor.text(call_id)}", ""]
    lines += [
        f"Waybook-Journal: {journal_id}",
        f"Waybook-Seq: {last.seq}",
        f"Waybook-Receipt: {last.digest}",
    ]
    message = ("\n".join(lines) + "\n").encode()
    when = int(datetime.fromisoformat(last.at.replace("Z", "+00:00")).timestamp())
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
    for repo, text in changes.items():
        out += f"D {repo}\n".encode() if text is None else _put(repo, text)
    return out + b"\n"


def _put(repo: str, text: str) -> bytes:
    data = text.encode("utf-8")
    return f"M 100644 inline {repo}\ndata {len(data)}\n".encode() + data + b"\n"


def _repo_path(path: str, redactor: Redactor) -> str:
    """`memories/...`, with a secret a path may spell masked (such a file cannot be imported back)."""
    return redactor.text(path).removeprefix("/")


# --- the hook an exported repository runs before each commit -------------------------------------------

HOOK: Final = """#!{python}
# Installed by waybook memory export-git: the checks memory makes, before a commit is made.
import sys
sys.path.insert(0, {root!r})
from waybook.integrations.git_memory import check_staged
raise SystemExit(check_staged())
"""


def install_hook(directory: Path, *, require_description: bool) -> None:
    """A `pre-commit` hook in the repository that runs `check_staged`: the memory path rules and the
    front-matter checks (and a description on every note, where the journal requires one)."""
    hooks = directory / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    root = str(Path(__file__).resolve().parents[2])  # the directory that holds this waybook
    hook = hooks / "pre-commit"
    hook.write_text(HOOK.format(python=sys.executable, root=root))
    hook.chmod(0o755)
    _git(directory, "config", "waybook.requireDescription", "true" if require_description else "false")


def check_staged(directory: str | Path = ".") -> int:
    """The pre-commit check: every staged file under memories/ must be a memory note the journal would
    take (path, extension, a regular UTF-8 file, readable front matter, a description where required).
    Prints each problem on stderr; 1 if there is one, else 0."""
    source = Path(directory)
    required = _git(source, "config", "--default", "false", "waybook.requireDescription").decode().strip()
    raw = _git(source, "diff", "--cached", "--raw", "-z", "--no-renames", "--diff-filter=AM")
    items = raw.decode("utf-8", errors="surrogateescape").split("\0")
    problems: list[str] = []
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        if not meta:
            continue
        _old_mode, mode, _old_blob, blob, _status = meta.lstrip(":").split(" ")
        problems.extend(_note_problems(source, path, mode, blob, required == "true"))
    for problem in problems:
        print(f"waybook: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _note_problems(source: Path, path: str, mode: str, blob: str, required: bool) -> list[str]:
    if not path.startswith(PREFIX):
        return [f"{path} is outside memories/; only files under memories/ are memory"]
    try:
        memory_path = normalize("/" + path)
        check_extension(memory_path)
    except PathError as exc:
        return [f"{path}: {exc}"]
    if mode not in FILE_MODES:
        return [f"{path} is not a regular file; memory holds regular files only"]
    try:
        text = _git(source, "cat-file", "blob", blob).decode("utf-8")
    except UnicodeDecodeError:
        return [f"{path} is not UTF-8 text; memory holds text only"]
    found = front_matter_problems(memory_path, text)
    if required and not (front_matter(text).description or "").strip():
        found.append(f"{memory_path} has no front-matter description, and this memory requires one")
    return found


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
    for entry in raw.decode("utf-8", errors="replace").split("\x1e"):
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


__all__ = [
    "ExportReport",
    "GitMemoryError",
    "ImportReport",
    "MaskedNameError",
    "check_staged",
    "export_git",
    "import_git",
    "install_hook",
]
