"""Where commands write files: never over their own input or a journal, replaced only atomically.

An output file is written beside its destination (a 0600 temp file, fsynced), then linked into place
(a new file) or renamed over the old one (only with --force). A reader never sees a half-written
export, and an interrupted export leaves the old file as it was.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from waybook._files import FILE_MODE, fsync_dir
from waybook.commands.exits import UsageError
from waybook.commands.journal_files import starts_with_header


def check_output(output: Path, *, inputs: Iterable[Path], force: bool) -> None:
    """Refuse an output that is an input (or its lock file), a journal, or (without force) any file."""
    for source in inputs:
        for protected in (source, source.parent / f"{source.name}.lock"):
            if _same_file(output, protected):
                msg = f"{output}: that is the input {source}; write the output to another file"
                raise UsageError(msg)
    if output.is_dir():
        msg = f"{output}: is a directory; give a file name for the output"
        raise UsageError(msg)
    if not output.parent.is_dir():
        msg = f"{output}: there is no directory {output.parent}; create it, or write the output elsewhere"
        raise UsageError(msg)
    if output.exists() and not output.is_file():
        return  # a device or a pipe: written to as a stream, never replaced
    if output.exists() or output.is_symlink():
        if starts_with_header(output):
            msg = f"{output}: is a waybook journal; exports never replace a journal, choose another file"
            raise UsageError(msg)
        if not force:
            msg = f"{output}: already exists; pass --force to replace it, or choose another file"
            raise UsageError(msg)


def write_lines(output: str, lines: Iterable[bytes], *, inputs: Iterable[Path], force: bool) -> int:
    """Write `lines` (each followed by a newline) to `output` ("-" is stdout); returns how many."""
    if output == "-":
        count = 0
        out = sys.stdout.buffer
        for line in lines:
            out.write(line + b"\n")
            count += 1
        out.flush()
        return count
    path = Path(output)
    inputs = tuple(inputs)
    if path.exists() and not path.is_file() and not path.is_dir():
        return _stream(path, lines, inputs=inputs)  # a device or a pipe (/dev/null, a fifo): never replaced
    if path.is_symlink():
        path = path.resolve()  # replace what the link points at, beside it, and keep the link
    check_output(path, inputs=inputs, force=force)
    directory = path.parent
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    temp = Path(temp_name)
    try:
        os.fchmod(fd, FILE_MODE)
        count = 0
        with os.fdopen(fd, "wb") as out:
            for line in lines:
                out.write(line + b"\n")
                count += 1
            out.flush()
            os.fsync(out.fileno())
        check_output(path, inputs=inputs, force=force)  # again: the export may have taken a while
        if force:
            os.replace(temp, path)
        else:
            try:
                os.link(temp, path)  # refuses a file someone created meanwhile, unlike rename
            except FileExistsError:
                msg = f"{path}: created by someone else meanwhile; nothing was written"
                raise UsageError(msg) from None
        fsync_dir(directory)
        return count
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def _stream(path: Path, lines: Iterable[bytes], *, inputs: tuple[Path, ...]) -> int:
    for source in inputs:
        if _same_file(path, source):
            msg = f"{path}: that is the input {source}; write the output to another file"
            raise UsageError(msg)
    count = 0
    with path.open("wb") as out:
        for line in lines:
            out.write(line + b"\n")
            count += 1
    return count


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
