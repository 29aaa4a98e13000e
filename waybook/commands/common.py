"""What CLI commands share: output streams, opening journals, replays with progress, one-line summaries.

Exit codes, usage errors and warnings are in commands.exits, below this module; the `--store` option in
commands.store_option and journal files in commands.journal_files, which this module opens journals with:
either way the journal is proven once and read from the disk once.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from waybook.commands.journal_files import open_journal_file
from waybook.commands.progress import PROGRESS_THRESHOLD
from waybook.commands.store_option import open_in_store
from waybook.commands.terminal import fit, visible
from waybook.journal import SessionJournal
from waybook.model import (
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    Record,
    Reset,
    SubagentLink,
    SystemMessage,
    ToolResult,
    UserMessage,
    plain_text,
)
from waybook.projections import replay


def emit_json(value: Any) -> None:
    """One JSON document on stdout (sorted keys, so output is stable for scripts and tests).

    On a terminal every non-ASCII character is escaped, so no control character from a session (C1
    controls, bidirectional overrides) reaches it raw; JSON escapes C0 controls anyway.
    """
    sys.stdout.write(json.dumps(value, sort_keys=True, ensure_ascii=sys.stdout.isatty()) + "\n")


def emit_json_streamed(value: dict[str, Any]) -> None:
    """`emit_json(value)`'s exact bytes, where each value of `value` that is an iterator is written as a
    JSON array item by item, never held whole: a document larger than memory (a tree's every branch
    path) costs the memory of one item at a time."""
    encode = json.JSONEncoder(sort_keys=True, ensure_ascii=sys.stdout.isatty()).encode
    write = sys.stdout.write
    write("{")
    for n, key in enumerate(sorted(value)):
        write(f"{', ' if n else ''}{encode(key)}: ")
        item = value[key]
        if not isinstance(item, Iterator):
            write(encode(item))
            continue
        write("[")
        chunk: list[str] = []
        written = False
        for element in item:
            chunk.append(encode(element))
            if len(chunk) == 1024:
                write((", " if written else "") + ", ".join(chunk))
                chunk, written = [], True
        if chunk:
            write((", " if written else "") + ", ".join(chunk))
        write("]")
    write("}\n")


PIPE_WIDTH = 1 << 20
"""The width Rich lays out for when stdout is not a terminal: lines are never wrapped into a pipe."""


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Leave a closed pipe to cli.main, which ends quietly with the SIGPIPE status."""
        self.quiet = True
        raise BrokenPipeError


def stdout() -> Console:
    """Rich on stdout: wraps to the terminal's width there; into a pipe or file, never wraps."""
    if sys.stdout.isatty():
        return _Console(highlight=False, soft_wrap=False)
    return _Console(highlight=False, soft_wrap=True, width=PIPE_WIDTH)


def open_journal(path: Path, store: str | None = None) -> SessionJournal:
    """Open a journal for reading only: nothing is created or changed. With `store` (a `--store URL`),
    `path` is the id of a journal in that store."""
    if store is not None:
        return open_in_store(store, str(path))
    return open_journal_file(path)


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
    return fit(visible(" ".join(text.split()), one_line=True), width)


def replay_with_progress(
    projection: Any, journal: SessionJournal, *, at: int | None = None, phases: Any = None
) -> Any:
    """`replay`, with a progress bar on stderr when stderr is a terminal and the replay is long.

    With `phases` (a commands.progress.Phases), the replay is one phase of the command's progress.
    """
    head = journal.head().seq
    total = head if at is None else min(at, head)
    if phases is not None and phases.enabled:
        phases.start("replaying", total=total)
        state = projection.initial()
        for record in journal.read(limit=at):
            state = projection.apply(state, record)
            if record.seq % 4096 == 0:
                phases.advance(record.seq)
        return state
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
