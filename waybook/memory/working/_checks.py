"""The checks every memory decision shares: a path a command may name, a text it may write, and the
refusal that carries the Failure a command returns. Pure: no journal, no I/O."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from waybook.journal import front_matter, is_valid_unicode
from waybook.journal._roles.memory import HOST_DELETE as HOST_DELETE
from waybook.journal._roles.memory import HOST_WRITE as HOST_WRITE
from waybook.journal._roles.memory import Limits
from waybook.journal._roles.memory_paths import ROOT, PathError, ancestors, check_extension, normalize
from waybook.memory.working._results import Failure, Value
from waybook.memory.working._state import MemoryFile, MemoryState
from waybook.model import MemoryDelete, MemoryRename, MemoryWrite

MemoryBody = MemoryWrite | MemoryDelete | MemoryRename


@attrs.frozen
class Write:
    bodies: tuple[MemoryBody, ...]
    value: Value
    content_digest: str | None = None
    dropped_links: tuple[str, ...] = ()


class RefusedError(Exception):
    """Internal: a decision refused; carries the Failure to return."""

    def __init__(self, code: str, message: str, path: str | None = None, **details: object) -> None:
        self.failure = Failure(code, message, path, dict(details) or None)
        super().__init__(message)


# --- paths and texts ----------------------------------------------------------------------------------------


def checked_path(raw: str) -> str:
    try:
        return normalize(raw)
    except PathError as problem:
        raise RefusedError(problem.code, str(problem), raw if isinstance(raw, str) else None) from None


def file_path(raw: str, state: MemoryState) -> str:
    """A path a file can be written at: valid, not the root, an allowed extension, no file above it."""
    path = checked_path(raw)
    if path == ROOT:
        raise RefusedError("ROOT_PROTECTED", f"{ROOT} is the memory root, not a file", path)
    try:
        check_extension(path)
    except PathError as problem:
        raise RefusedError(problem.code, str(problem), path) from None
    for above in ancestors(path):
        if state.is_file(above):
            raise RefusedError(
                "PATH_CONFLICT", f"{above} is a file, so {path} cannot be created under it", path
            )
    if state.is_directory(path):
        raise RefusedError("PATH_CONFLICT", f"{path} is a directory; a file cannot replace it", path)
    return path


def existing_file(raw: str, state: MemoryState) -> str:
    path = checked_path(raw)
    if state.is_file(path):
        return path
    if state.is_directory(path):
        raise RefusedError("PATH_CONFLICT", f"{path} is a directory; this command needs a file", path)
    raise RefusedError("NOT_FOUND", f"{path} does not exist", path)


def writable(path: str, state: MemoryState) -> None:
    file = state.files.get(path)
    if file is not None and file.read_only:
        msg = f"{path} is read-only (front matter `read_only: true`); nothing was changed"
        raise RefusedError("INVALID_ARGUMENT", msg, path, read_only=True)


def not_making_read_only(path: str, text: str) -> None:
    """A write of the agent face never makes a note read-only: that is the host's (Memory.set_read_only)."""
    if front_matter(text).read_only:
        msg = (
            f"{path}: `read_only: true` is set by the host (Memory.set_read_only), not by a write; "
            "write the note without it"
        )
        raise RefusedError("INVALID_ARGUMENT", msg, path, read_only_by_host=True)


def checked_text(text: str, field: str) -> None:
    if not is_valid_unicode(text):
        raise RefusedError("INVALID_ARGUMENT", f"{field} is not valid Unicode (it holds a lone surrogate)")


# --- limits and eviction --------------------------------------------------------------------------


def fitting_file(path: str, size: int, limits: Limits) -> None:
    """A file of `size` bytes at `path` is within the per-file limit, or RefusedError."""
    if size > limits.max_file_bytes:
        msg = f"{path} would be {size} bytes; the limit is {limits.max_file_bytes} bytes per file"
        raise RefusedError("LIMIT_EXCEEDED", msg, path, size=size, limit=limits.max_file_bytes)


def evictions(
    others: Iterable[MemoryFile],
    total: int,
    count: int,
    limits: Limits,
    *,
    what: str,
    path: str | None,
    size: int,
) -> tuple[str, ...]:
    """The files of `others` to evict, earliest written first (read-only ones never), until `total` bytes
    in `count` files fit `limits`; RefusedError (naming `what` needs the room, `path` and `size` in its
    details) when evicting every one of them is not enough."""
    evicted: list[str] = []
    for victim in sorted((f for f in others if not f.read_only), key=lambda f: (f.written, f.path)):
        if total <= limits.max_total_bytes and count <= limits.max_files:
            break
        evicted.append(victim.path)
        total -= victim.size
        count -= 1
    if total > limits.max_total_bytes or count > limits.max_files:
        msg = (
            f"{what} cannot fit within {limits.max_total_bytes} bytes and {limits.max_files} files even "
            f"after evicting every other file (it needs {total} bytes in {count} files); nothing was changed"
        )
        raise RefusedError("LIMIT_EXCEEDED", msg, path, size=size)
    return tuple(evicted)
