"""Small text files a command line names (a patterns file): read only when regular, bounded, UTF-8.

A FIFO or a device named where a file is expected would block the command or never end (`/dev/zero`);
each is refused by name, with the flag that named it, before a byte is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from waybook.commands.exits import UsageError

TEXT_FILE_LIMIT: Final = 1 << 20
"""The largest option file read (a patterns file is a few lines)."""


def read_text_file(path: Path, *, flag: str, limit: int = TEXT_FILE_LIMIT) -> str:
    """The UTF-8 text of the regular file `path`, named on the command line by `flag`."""
    where = f"{flag} {path}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        msg = f"{where}: cannot read it ({exc.strerror or exc})"
        raise UsageError(msg) from None
    why = _refusal(os.fstat(fd), limit)
    if why is not None:
        os.close(fd)
        msg = f"{where}: {why}"
        raise UsageError(msg)
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{where}: is not UTF-8 text (byte {exc.start})"
        raise UsageError(msg) from None


def _refusal(status: os.stat_result, limit: int) -> str | None:
    if stat.S_ISDIR(status.st_mode):
        return "is a directory; give a text file"
    if not stat.S_ISREG(status.st_mode):
        return "is not a regular file (a FIFO or a device); give a text file"
    if status.st_size > limit:
        return f"is larger than {limit} bytes; give a smaller text file"
    return None
