"""How an import opens another program's files: regular files only, and inside the folder it walks.

An import reads folders other programs keep (`~/.claude/projects`, `~/.codex/sessions`, OpenCode's
storage). A name there may be a FIFO (reading it would wait forever), a device, a socket, or a link to a
file elsewhere (whose text the import would copy into a journal). `read_regular` is the one way the
importers read such a file: it opens without blocking, checks that what it opened is a regular file, and
for a file a walk found, that the file lies inside the walked folder once links are resolved (it then
opens that resolved path without following a link, so a link swapped in meanwhile is refused too).
Anything else is a `RefusedFileError` naming the path.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from waybook.model import JournalError

_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


class RefusedFileError(JournalError, ValueError):
    """A file an import does not read: not a regular file (a FIFO, device, socket or folder), a link
    leading outside the folder being imported, or one that cannot be opened. `path` is the file."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"{path}: {why}")


def read_regular(
    path: Path,
    *,
    inside: Path | None = None,
    where: str = "folder",
    limit: int | None = None,
    head: int | None = None,
) -> bytes:
    """The bytes of the regular file `path`.

    `inside`: the folder a walk found `path` in; the file must lie inside it once links are resolved
    (`where` names that folder in the refusal). Without it, `path` is a file the caller named, and a link
    there is followed. `limit`: refuse a file larger than this many bytes. `head`: read only the first
    `head` bytes.
    """
    with os.fdopen(_open_regular(path, inside=inside, where=where, limit=limit), "rb") as file:
        return file.read(-1 if head is None else head)


def read_regular_from(
    path: Path,
    *,
    start: int = 0,
    inside: Path | None = None,
    where: str = "folder",
    limit: int | None = None,
    head: int | None = None,
) -> tuple[bytes, os.stat_result]:
    """`read_regular` from byte `start` on, with the file's status as it was opened (its device and
    inode say which file it is; a watcher reads a growing file this way, a piece at a time)."""
    with os.fdopen(_open_regular(path, inside=inside, where=where, limit=limit), "rb") as file:
        status = os.fstat(file.fileno())
        if start:
            file.seek(start)
        return file.read(-1 if head is None else head), status


def check_regular(path: Path, *, inside: Path | None = None, where: str = "folder") -> None:
    """Refuse `path` (a `RefusedFileError`) unless it is a regular file, by `read_regular`'s rules, for
    a reader that opens the file itself afterwards (SQLite). Nothing is read, and nothing waits."""
    os.close(_open_regular(path, inside=inside, where=where, limit=None))


def _open_regular(path: Path, *, inside: Path | None, where: str, limit: int | None) -> int:
    """A descriptor open on the regular file `path`, by `read_regular`'s rules."""
    target, flags = path, _FLAGS
    if inside is not None:
        home, target = inside.resolve(), path.resolve()
        if not target.is_relative_to(home):
            raise RefusedFileError(
                path,
                f"a link outside the {where} ({home}), to {target}; waybook does not follow it (copy "
                "the file into the folder to import it)",
            )
        flags |= _NOFOLLOW
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise RefusedFileError(path, _unopened(target, exc)) from None
    why = _refusal(fd, limit)
    if why is not None:
        os.close(fd)
        raise RefusedFileError(path, why)
    return fd


def _refusal(fd: int, limit: int | None) -> str | None:
    """Why the open file `fd` is not read, or None."""
    try:
        status = os.fstat(fd)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISREG(status.st_mode):
        return f"{_kind(status.st_mode)}, not a regular file; waybook imports regular files only"
    if limit is not None and status.st_size > limit:
        return f"larger than {limit} bytes"
    return None


def _unopened(target: Path, error: OSError) -> str:
    """Why `target` could not be opened: what it is when that is not a regular file (a socket cannot be
    opened at all), else the system's reason."""
    try:
        mode = os.stat(target, follow_symlinks=False).st_mode
    except OSError:
        mode = stat.S_IFREG
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        return f"{_kind(mode)}, not a regular file; waybook imports regular files only"
    return f"cannot be opened ({error.strerror})"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
