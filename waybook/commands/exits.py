"""Exit codes, usage errors, warnings and the one error guard: the bottom of waybook.commands.

Every command runs through `run_guarded` (cli.main calls it): a typed waybook error (a JournalError) is
one line on stderr and exit 1, a mistake in the command line (a UsageError, or a file that cannot be
opened) one line and exit 2. Only a bug shows a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

from waybook.commands.terminal import visible
from waybook.model import CorruptJournalError, JournalError

OK: Final = 0
PROBLEM: Final = 1
USAGE: Final = 2


class UsageError(Exception):
    """A mistake in the command line: exit 2 with the message on stderr."""


def quoted(value: str, *, size: int = 40) -> str:
    """A value from the command line as a message quotes it: its repr, cut to `size` characters (a value
    can be 100 KB)."""
    shown = repr(value)
    return shown if len(shown) <= size else shown[: size - 1] + "…"


def check_recorded(flag: str, value: str | None, *, what: str) -> None:
    """A text option a command records for auditors (`--actor`, `--policy`): left out, or not blank."""
    if value is not None and not value.strip():
        msg = f"{flag} {quoted(value)}: give {what} (it is recorded for auditors), or leave {flag} out"
        raise UsageError(msg)


def warn(message: str) -> None:
    """One diagnostic line on stderr, `waybook: ...`, made visible (a message can quote hostile bytes)."""
    sys.stderr.write(f"waybook: {visible(message)}\n")


def corruption_in_cli_terms(error: CorruptJournalError) -> str:
    """What a CLI user reads for a damaged journal: the commands to run, not the Python option."""
    what = f"{error.path}: corrupt record at seq {error.seq} (byte {error.offset}): {error.reason}."
    if Path(error.path).is_file():
        todo = (
            f"`waybook verify {error.path}` reports the damage, `waybook view {error.path} -o OUT.html` "
            "shows the intact records before it; restore the file from a copy."
        )
    else:
        todo = "`waybook verify --store URL ID` reports the damage; restore the journal from a copy."
    return f"{what} Records after it cannot be trusted; nothing was changed. {todo}"


def run_guarded(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """`run(args)`, with typed errors turned into one line on stderr and the right exit code."""
    try:
        return int(run(args))
    except BrokenPipeError:
        raise  # the reader went away (`| head`): cli.main ends quietly
    except UsageError as exc:
        warn(str(exc))
        return USAGE
    except CorruptJournalError as exc:
        warn(corruption_in_cli_terms(exc))
        return PROBLEM
    except JournalError as exc:  # before OSError: a StorageError is both
        warn(str(exc))
        return PROBLEM
    except OSError as exc:
        warn(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        return USAGE
