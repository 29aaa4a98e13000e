"""The rules of memory and pin journals, enforced by the journal itself on every append and every replay.

A journal whose header declares a memory role (`working_memory`, `canonical_memory`) holds only memory
records, and they must keep these rules whoever writes them (the Memory port, the authority, a raw
`journal.append`, another process):

- every path is a valid memory path (`memory_paths.normalize`), and a written or moved-to path is a file
  path (not the root, an allowed extension);
- a write's `digest` is the SHA-256 of its text;
- a read-only file (front matter `read_only: true`) is never overwritten, deleted or moved;
- where the header says `metadata.require_description: true`, every note's text (a new note, an edit,
  a moved note's new text) has a non-empty front-matter `description`;
- a file and a directory never share a path (no file under a file, no file over a directory that holds
  files; a file written where an empty directory is replaces it);
- a directory exists once a file was written or moved below it, or a directory was moved to it, until the
  directory itself is deleted or moved (a delete's or a rename's `directories`, which must name every
  file below it in the same record): deleting or moving its last file leaves it, empty;
- a delete or a move names files (and directories) that exist;
- the limits in the header (`metadata.limits`, else the role's defaults) hold after every record;
- a request (tool-call) id names one contiguous run of records: an append refuses an id already used;
- in canonical memory an adoption record is followed by exactly its writes, in the same batch, so no
  head lies inside an adoption.

- reflection scheduler transitions follow `reflection_rules` (one pending, one active, legal windows).

A `pin` journal holds pin moves only, each starting where the last one ended.

`RoleRules.check` decides a batch without changing anything and returns a delta; `commit` applies it.
The Memory port plans its writes with the same path and text functions, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from waybook.journal._roles.memory_paths import (
    ROOT,
    PathError,
    ancestors,
    check_extension,
    enter_directories,
    is_under,
    leave_directories,
    normalize,
)
from waybook.journal._roles.memory_text import (
    DESCRIPTION_ADVICE,
    byte_length,
    content_digest,
    front_matter,
    is_valid_unicode,
)
from waybook.journal._roles.reflection import ReflectionState, reflect
from waybook.model import (
    AnyBody,
    Header,
    InvalidRecordError,
    MemoryAdoption,
    MemoryDelete,
    MemoryPinMoved,
    MemoryRename,
    MemoryRuleError,
    MemorySynced,
    MemoryWrite,
    NewRecord,
    Record,
    ReflectionFinished,
    ReflectionReserved,
    ReflectionStarted,
)

MEMORY_ROLES: Final = ("working_memory", "canonical_memory")
HOST_WRITE: Final = "set_read_only"
"""A write with this `command` is the host's read-only switch: it may change a read-only note."""
HOST_DELETE: Final = "host"
"""A delete with this `reason` is the host's: it may remove read-only notes."""
CHECKED_ROLES: Final = (*MEMORY_ROLES, "pin")


@attrs.frozen
class Limits:
    """Memory limits, in UTF-8 bytes and files. The Memory port evicts the earliest-written files to stay
    within its limits; the journal refuses any record that would pass the limits its header declares."""

    max_file_bytes: int = 65_536
    max_total_bytes: int = 1_048_576
    max_files: int = 256

    def as_json(self) -> dict[str, int]:
        return {
            "max_file_bytes": self.max_file_bytes,
            "max_total_bytes": self.max_total_bytes,
            "max_files": self.max_files,
        }


WORKING_LIMITS: Final = Limits()
CANONICAL_LIMITS: Final = Limits(max_file_bytes=65_536, max_total_bytes=32 * 1024 * 1024, max_files=8_192)


def header_limits(header: Header) -> Limits:
    """The limits a memory journal's header declares (`metadata.limits`), else its role's defaults."""
    default = CANONICAL_LIMITS if header.role == "canonical_memory" else WORKING_LIMITS
    raw = header.metadata.get("limits")
    if raw is None:
        return default
    fields = ("max_file_bytes", "max_total_bytes", "max_files")
    if not isinstance(raw, dict) or set(raw) - set(fields):
        msg = f"header metadata.limits must be an object with {', '.join(fields)}, not {raw!r}"
        raise InvalidRecordError(msg)
    values = {name: raw.get(name, getattr(default, name)) for name in fields}
    if not all(type(v) is int and v > 0 for v in values.values()):
        msg = f"header metadata.limits must hold positive integers, not {raw!r}"
        raise InvalidRecordError(msg)
    return Limits(**values)


@attrs.frozen
class FileFacts:
    """What the rules need to know of one file."""

    digest: str
    size: int
    read_only: bool


@attrs.frozen
class MemoryDelta:
    files: dict[str, FileFacts]
    directories: dict[str, int]
    kept: set[str]
    total_bytes: int
    requests: frozenset[str]
    last_request: str | None
    open_adoption: tuple[str, int] | None
    reflection: ReflectionState


@attrs.define
class MemoryRules:
    """Rule state of one memory journal: O(changed paths) per record, O(files) per batch (a copy)."""

    journal: str
    role: str
    limits: Limits
    require_description: bool = False
    """The header's profile (`metadata.require_description: true`): every written text needs a description."""
    files: dict[str, FileFacts] = attrs.Factory(dict)
    directories: dict[str, int] = attrs.Factory(dict)
    """How many files are below each directory."""
    kept: set[str] = attrs.Factory(set)
    """Every directory that exists (the root aside): those above files and the empty ones."""
    total_bytes: int = 0
    requests: set[str] = attrs.Factory(set)
    last_request: str | None = None
    open_adoption: tuple[str, int] | None = None
    reflection: ReflectionState = attrs.Factory(ReflectionState)

    def check(self, batch: Sequence[NewRecord | Record], *, appending: bool) -> MemoryDelta:
        """Decide `batch` (the records after the header); raises MemoryRuleError and changes nothing."""
        scratch = _Scratch(self, appending)
        for record in batch:
            scratch.apply(record.id, record.body)
        if appending and scratch.open_adoption is not None:
            operation, missing = scratch.open_adoption
            msg = f"adoption {operation} is missing its last {missing} writes; an adoption is one batch"
            raise self.error(msg, "INVALID_ARGUMENT", operation)
        return MemoryDelta(
            files=scratch.files,
            directories=scratch.directories,
            kept=scratch.kept,
            total_bytes=scratch.total_bytes,
            requests=frozenset(scratch.new_requests),
            last_request=scratch.last_request,
            open_adoption=scratch.open_adoption,
            reflection=scratch.reflection,
        )

    def commit(self, delta: MemoryDelta) -> None:
        self.files = delta.files
        self.directories = delta.directories
        self.kept = delta.kept
        self.total_bytes = delta.total_bytes
        self.requests.update(delta.requests)
        self.last_request = delta.last_request
        self.open_adoption = delta.open_adoption
        self.reflection = delta.reflection

    def error(
        self, message: str, code: str, record_id: str, path: str | None = None, **details: object
    ) -> MemoryRuleError:
        return MemoryRuleError(
            message,
            code=code,
            journal=self.journal,
            record_id=record_id,
            path=path,
            details=dict(details) or None,
        )


class _Scratch:
    """A batch applied to copies of the rule state, one record at a time."""

    def __init__(self, rules: MemoryRules, appending: bool) -> None:
        self.rules = rules
        self.appending = appending
        self.files = dict(rules.files)
        self.directories = dict(rules.directories)
        self.kept = set(rules.kept)
        self.total_bytes = rules.total_bytes
        self.new_requests: set[str] = set()
        self.last_request = rules.last_request
        self.open_adoption = rules.open_adoption
        self.reflection = rules.reflection

    def apply(self, rid: str, body: AnyBody) -> None:
        kind = type(body)
        if self.open_adoption is not None:
            self._adoption_write(rid, body)
        if kind is MemoryWrite:
            self._write(rid, body)  # type: ignore[arg-type]
        elif kind is MemoryDelete:
            self._delete(rid, body)  # type: ignore[arg-type]
        elif kind is MemoryRename:
            self._rename(rid, body)  # type: ignore[arg-type]
        elif kind is MemoryAdoption and self.rules.role == "canonical_memory":
            self._adoption(rid, body)  # type: ignore[arg-type]
        elif kind is MemorySynced and self.rules.role == "working_memory":
            self.last_request = None  # a sync's record: it changes no note
            return
        elif kind in (ReflectionReserved, ReflectionStarted, ReflectionFinished):
            self.reflection = reflect(self.reflection, rid, body, self.rules.journal)  # type: ignore[arg-type]
            self.last_request = None
            return
        else:
            msg = (
                f"record {rid!r} is a {body.KIND} record; a {self.rules.role} journal holds memory records "
                "only (writes, deletes, renames, reflection transitions, syncs with a git remote in working "
                "memory, and adoptions in canonical memory)"
            )
            raise InvalidRecordError(msg, journal=self.rules.journal, record_id=rid)
        self._request(rid, getattr(body, "call_id", None) if kind is not MemoryAdoption else body.operation)  # type: ignore[union-attr]

    # --- one record ---------------------------------------------------------------------------------

    def _write(self, rid: str, body: MemoryWrite) -> None:
        path = self._file_path(rid, body.path)
        if type(body.text) is not str or not is_valid_unicode(body.text):
            msg = f"the text of {path} is not valid Unicode"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, path)
        if body.digest != content_digest(body.text):
            msg = f"record {rid!r} says digest {body.digest!r} for {path}, but its text's SHA-256 differs"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, path, digest=True)
        if body.command != HOST_WRITE:  # the host's read-only switch may change a read-only note
            self._writable(rid, path)
        size = byte_length(body.text)
        limits = self.rules.limits
        if size > limits.max_file_bytes:
            msg = f"{path} would be {size} bytes; the limit is {limits.max_file_bytes} bytes per file"
            raise self.rules.error(msg, "LIMIT_EXCEEDED", rid, path, size=size, limit=limits.max_file_bytes)
        old = self.files.get(path)
        matter = front_matter(body.text)
        if self.rules.require_description and not (matter.description or "").strip():
            what = "a new note" if old is None else "an edit that would leave the note without a description"
            msg = f"{path}: {what}, and this memory requires a front-matter description; {DESCRIPTION_ADVICE}"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, path, description_required=True)
        if old is None:
            self._occupy(path)
        self.total_bytes += size - (old.size if old else 0)
        self.files[path] = FileFacts(body.digest, size, matter.read_only)
        self._within_limits(rid, path)

    def _delete(self, rid: str, body: MemoryDelete) -> None:
        folders = body.directories
        if len(set(body.paths)) != len(body.paths) or len(set(folders)) != len(folders):
            msg = f"delete {rid!r} must name each path and each directory once"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid)
        if not body.paths and not folders:
            msg = f"delete {rid!r} must name one or more paths or directories"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid)
        gone = [self._directory(rid, raw) for raw in folders]
        for raw in body.paths:
            path = self._existing(rid, raw)
            if body.reason != HOST_DELETE:  # the host may always remove a note
                self._writable(rid, path)
            self._remove(path)
        for directory in gone:
            self._emptied(rid, directory, "delete")
            self.kept.difference_update(_below(self.kept, directory))

    def _rename(self, rid: str, body: MemoryRename) -> None:
        sources = [old for old, _ in body.moves] + [old for old, _ in body.directories]
        if not sources or len(set(sources)) != len(sources):
            msg = f"rename {rid!r} must name one or more moves, each source once"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid)
        folders = [self._directory_move(rid, old, new) for old, new in body.directories]
        moved = []
        for old, new in body.moves:
            path = self._existing(rid, old)
            self._writable(rid, path)
            for source, target in folders:
                if is_under(path, source) and new != target + path[len(source) :]:
                    msg = f"rename {rid!r} moves {source} to {target}, so {path} must move below {target}"
                    raise self.rules.error(msg, "INVALID_ARGUMENT", rid, path)
            moved.append((self._remove(path), new))
        for source, target in folders:
            self._emptied(rid, source, "rename")
            below = _below(self.kept, source)
            self.kept.difference_update(below)
            self.kept.update(target + d[len(source) :] for d in below)
            self.kept.update(ancestors(target))
        for facts, new in moved:
            path = self._file_path(rid, new)
            self._occupy(path)
            self.files[path] = facts
            self.total_bytes += facts.size

    def _adoption(self, rid: str, body: MemoryAdoption) -> None:
        if type(body.writes) is not int or body.writes < 1:
            msg = f"adoption {rid!r} must be followed by at least one write, not {body.writes!r}"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid)
        self.open_adoption = (body.operation, body.writes)

    def _adoption_write(self, rid: str, body: AnyBody) -> None:
        assert self.open_adoption is not None
        operation, left = self.open_adoption
        if type(body) not in (MemoryWrite, MemoryDelete) or body.call_id != operation:  # type: ignore[union-attr]
            msg = (
                f"record {rid!r} interrupts adoption {operation}, which still needs {left} writes; "
                "an adoption and its writes are one batch"
            )
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid)
        self.open_adoption = (operation, left - 1) if left > 1 else None

    def _request(self, rid: str, request: str | None) -> None:
        """A request id names one contiguous run of records; an append never reuses one."""
        if request is None:
            self.last_request = None
            return
        used = request in self.rules.requests or request in self.new_requests
        continues = request == self.last_request and (not self.appending or request in self.new_requests)
        if used and not continues:
            msg = (
                f"request id {request!r} was already used in this journal (record {rid!r}); "
                "every request needs a new id, and an exact retry resends the same records"
            )
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, reused_request=request)
        self.new_requests.add(request)
        self.last_request = request

    # --- shared checks ------------------------------------------------------------------------------

    def _path(self, rid: str, raw: Any) -> str:
        try:
            path = normalize(raw)
        except PathError as problem:
            raise self.rules.error(str(problem), problem.code, rid, str(raw)) from None
        if path != raw:
            msg = f"record {rid!r}: path {raw!r} is not in canonical form ({path!r})"
            raise self.rules.error(msg, "INVALID_PATH", rid, str(raw))
        return path

    def _file_path(self, rid: str, raw: Any) -> str:
        path = self._path(rid, raw)
        if path == ROOT:
            msg = f"{ROOT} is the memory root, not a file"
            raise self.rules.error(msg, "ROOT_PROTECTED", rid, path)
        try:
            check_extension(path)
        except PathError as problem:
            raise self.rules.error(str(problem), problem.code, rid, path) from None
        for above in ancestors(path):
            if above in self.files:
                msg = f"{above} is a file, so {path} cannot be created under it"
                raise self.rules.error(msg, "PATH_CONFLICT", rid, path)
        if self.directories.get(path, 0) > 0:
            msg = f"{path} is a directory; a file cannot replace it"
            raise self.rules.error(msg, "PATH_CONFLICT", rid, path)
        return path

    def _existing(self, rid: str, raw: Any) -> str:
        path = self._path(rid, raw)
        if path not in self.files:
            msg = f"{path} is not a file of this journal"
            raise self.rules.error(msg, "NOT_FOUND", rid, path)
        return path

    def _occupy(self, path: str) -> None:
        """A new file at `path`: its directories exist; an empty directory at `path` is replaced."""
        if path in self.kept:
            self.kept.difference_update(_below(self.kept, path))
        enter_directories(self.directories, self.kept, path)

    def _directory(self, rid: str, raw: Any) -> str:
        path = self._path(rid, raw)
        if path == ROOT:
            msg = f"{ROOT} is the memory root; it cannot be deleted or moved"
            raise self.rules.error(msg, "ROOT_PROTECTED", rid, path)
        if path not in self.kept:
            msg = f"{path} is not a directory of this journal"
            raise self.rules.error(msg, "NOT_FOUND", rid, path)
        return path

    def _directory_move(self, rid: str, old: Any, new: Any) -> tuple[str, str]:
        source, target = self._directory(rid, old), self._path(rid, new)
        if target == ROOT or target in self.files or target in self.kept or is_under(target, source):
            msg = (
                f"rename {rid!r} cannot move directory {source} to {target}: it exists or is inside {source}"
            )
            raise self.rules.error(msg, "PATH_CONFLICT", rid, target)
        for above in ancestors(target):
            if above in self.files:
                msg = f"{above} is a file, so {target} cannot be a directory"
                raise self.rules.error(msg, "PATH_CONFLICT", rid, target)
        return source, target

    def _emptied(self, rid: str, directory: str, verb: str) -> None:
        left = self.directories.get(directory, 0)
        if left:
            msg = f"record {rid!r} would {verb} directory {directory} but not the {left} files below it"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, directory)

    def _writable(self, rid: str, path: str) -> None:
        facts = self.files.get(path)
        if facts is not None and facts.read_only:
            msg = f"{path} is read-only (front matter `read_only: true`); it cannot be changed"
            raise self.rules.error(msg, "INVALID_ARGUMENT", rid, path, read_only=True)

    def _remove(self, path: str) -> FileFacts:
        facts = self.files.pop(path)
        self.total_bytes -= facts.size
        leave_directories(self.directories, path)
        return facts

    def _within_limits(self, rid: str, path: str) -> None:
        limits = self.rules.limits
        if self.total_bytes > limits.max_total_bytes or len(self.files) > limits.max_files:
            msg = (
                f"writing {path} would hold {len(self.files)} files and {self.total_bytes} bytes; the limits "
                f"are {limits.max_files} files and {limits.max_total_bytes} bytes. Delete files first"
            )
            raise self.rules.error(msg, "LIMIT_EXCEEDED", rid, path, size=self.total_bytes)


def _below(directories: set[str], directory: str) -> list[str]:
    """`directory` (if it is one) and every directory under it."""
    return [d for d in directories if d == directory or d.startswith(directory + "/")]


@attrs.define
class PinRules:
    """Rule state of a pin journal: pin moves only, each from the head the last one moved to."""

    journal: str
    last: tuple[str, int, str] | None = None

    def check(self, batch: Sequence[NewRecord | Record], *, appending: bool) -> tuple[str, int, str] | None:
        last = self.last
        for record in batch:
            body = record.body
            if type(body) is not MemoryPinMoved:
                msg = f"record {record.id!r} is a {body.KIND} record; a pin journal holds pin moves only"
                raise InvalidRecordError(msg, journal=self.journal, record_id=record.id)
            if last is not None and (body.canonical, body.prior_seq, body.prior_digest) != last:
                msg = (
                    f"pin move {record.id!r} starts at seq {body.prior_seq} of {body.canonical}, not where "
                    f"the last pin move ended (seq {last[1]} of {last[0]})"
                )
                raise InvalidRecordError(msg, journal=self.journal, record_id=record.id)
            last = (body.canonical, body.new_seq, body.new_digest)
        return last

    def commit(self, delta: tuple[str, int, str] | None) -> None:
        self.last = delta


RoleRules = MemoryRules | PinRules


def role_rules(journal: str, header: Header) -> RoleRules | None:
    """The extra rules a journal of `header`'s role keeps, or None for a session or catalog journal."""
    if header.role in MEMORY_ROLES:
        try:
            limits = header_limits(header)
        except InvalidRecordError as exc:
            raise InvalidRecordError(str(exc), journal=journal) from None
        required = header.metadata.get("require_description", False)
        if type(required) is not bool:
            msg = f"header metadata.require_description must be true or false, not {required!r}"
            raise InvalidRecordError(msg, journal=journal)
        return MemoryRules(journal=journal, role=header.role, limits=limits, require_description=required)
    if header.role == "pin":
        return PinRules(journal=journal)
    return None
