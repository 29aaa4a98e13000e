"""A command's output through a pager on a terminal, as git and man do (`show`; `--no-pager` skips it).

The pager is `$WAYBOOK_PAGER`, else `$PAGER`, else `less`, run with `LESS=FRX` unless the user set LESS:
it quits at once when the output fits one screen, passes the styles through, and leaves the text on the
screen. Into a pipe or a file there is no pager, and an empty pager or `cat` means none. A pager that
cannot be started is not an error: the output goes to the terminal as it would without one. Quitting
the pager before the end stops the command quietly.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from typing import Final

DEFAULT_PAGER: Final = "less"
LESS_OPTIONS: Final = "FRX"


class _ToPager(io.TextIOWrapper):
    """The pager's input, which ends on the user's terminal: styled as a terminal would be."""

    def isatty(self) -> bool:
        return True


def pager_command() -> list[str] | None:
    """The pager to run, as argv, or None when the user asked for none."""
    chosen = os.environ.get("WAYBOOK_PAGER", os.environ.get("PAGER", DEFAULT_PAGER)).strip()
    if chosen in ("", "cat"):
        return None
    try:
        return shlex.split(chosen)
    except ValueError:  # unbalanced quotes: not a command line we can run
        return None


@contextlib.contextmanager
def paged(*, enabled: bool = True) -> Iterator[None]:
    """Within it, `sys.stdout` writes into the pager when `enabled` and stdout is a terminal."""
    command = pager_command() if enabled and sys.stdout.isatty() else None
    if command is None:
        yield
        return
    terminal = sys.stdout
    try:
        terminal.flush()
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=terminal.fileno(),
            env={**os.environ, "LESS": os.environ.get("LESS", LESS_OPTIONS)},
        )
    except (OSError, ValueError, io.UnsupportedOperation):  # no such pager, or no terminal descriptor
        yield
        return
    assert process.stdin is not None
    into = _ToPager(process.stdin, encoding="utf-8", errors="replace", line_buffering=False)
    sys.stdout = into
    try:
        yield
        with contextlib.suppress(BrokenPipeError):
            into.flush()
    except BrokenPipeError:
        pass  # the user quit the pager before the end
    finally:
        sys.stdout = terminal
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            into.close()
        process.wait()
