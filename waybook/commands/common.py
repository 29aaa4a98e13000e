"""What CLI commands share: exit codes, output streams, opening journals, and one-line summaries."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from waybook.commands.store_option import add_store_option as add_store_option  # for the commands
from waybook.commands.store_option import open_in_store
from waybook.journal import JournalError, JsonlJournal, Record, SessionJournal, plain_text
from waybook.journal.records import (
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    Reset,
    SubagentLink,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from waybook.projections import replay

OK, PROBLEM, USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake in the command line: exit 2 with the message on stderr."""


def emit_json(value: Any) -> None:
    """One JSON document on stdout (sorted keys, so output is stable for scripts and tests)."""
    sys.stdout.write(json.dumps(value, sort_keys=True, ensure_ascii=False) + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"waybook: {message}\n")


def stdout() -> Console:
    return Console(highlight=False, soft_wrap=False)


def guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn typed errors into diagnostics on stderr and the right exit code."""

    @functools.wraps(run)
    def wrapper(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except UsageError as exc:
            warn(str(exc))
            return USAGE
        except JournalError as exc:
            warn(str(exc))
            return PROBLEM
        except OSError as exc:
            warn(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
            return USAGE

    return wrapper


def open_journal(path: Path, store: str | None = None) -> SessionJournal:
    """Open a journal for reading only: nothing is created or changed. With `store` (a `--store URL`),
    `path` is the id of a journal in that store."""
    if store is not None:
        return open_in_store(store, str(path))
    if not path.is_file():
        msg = f"{path}: no such journal file"
        raise UsageError(msg)
    return JsonlJournal(path, readonly=True, sidecar=False)  # audits prove the whole file


def short_kind(kind: str) -> str:
    """`waybook.user/2` -> `user`."""
    return kind.removeprefix("waybook.").split("/")[0]


def summary(record: Record, width: int = 60) -> str:
    """A one-line description of a record's body."""
    body = record.body
    if isinstance(body, UserMessage | SystemMessage):
        text = plain_text(body.content)
    elif isinstance(body, AssistantMessage):
        calls = ", ".join(f"{c.name}()" for c in body.tool_calls)
        text = " ".join(x for x in (plain_text(body.content), calls and f"calls {calls}") if x)
    elif isinstance(body, ToolResult):
        text = f"{body.tool_name or 'tool'} -> {plain_text(body.content)}"
    elif isinstance(body, Compaction):
        text = f"summary: {body.summary}"
    elif isinstance(body, ContextExclusion):
        text = f"excludes {body.target}: {body.reason}"
    elif isinstance(body, CustomEntry):
        text = f"{body.type} {plain_text(body.content) or json.dumps(body.data, sort_keys=True)}"
    elif isinstance(body, LeafMoved):
        text = f"{body.from_leaf} -> {body.to_leaf}: {body.reason}"
    elif isinstance(body, Reset):
        text = f"reset: {body.reason}"
    elif isinstance(body, SubagentLink):
        text = f"sub-agent {body.agent or ''} in journal {body.journal} at {body.node} {body.call_id or ''}"
    elif isinstance(body, Header):
        text = f"journal {body.journal} by {body.creator}"
    else:
        text = ""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


PROGRESS_THRESHOLD = 20_000
"""Replays of at least this many records show a progress bar (on a terminal only)."""


def replay_with_progress(projection: Any, journal: SessionJournal, *, at: int | None = None) -> Any:
    """`replay`, with a progress bar on stderr when stderr is a terminal and the replay is long."""
    head = journal.head().seq
    total = head if at is None else min(at, head)
    if total < PROGRESS_THRESHOLD or not sys.stderr.isatty():
        return replay(projection, journal, at=at)
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("replaying", total=total)
        state = projection.initial()
        for record in journal.read(limit=at):
            state = projection.apply(state, record)
            if record.seq % 4096 == 0:
                progress.update(task, completed=record.seq)
        return state


@contextlib.contextmanager
def activity(message: str) -> Iterator[None]:
    """A spinner on stderr while a long step runs, on a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    with Console(stderr=True).status(message):
        yield


def seq_arg(value: str) -> int:
    try:
        seq = int(value)
    except ValueError:
        msg = f"{value!r} is not a seq (a whole number)"
        raise argparse.ArgumentTypeError(msg) from None
    if seq < 0:
        msg = "a seq is 0 or more"
        raise argparse.ArgumentTypeError(msg)
    return seq
