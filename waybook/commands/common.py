"""What CLI commands share: exit codes, output streams, opening journals, and one-line summaries."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from waybook.commands.terminal import visible
from waybook.journal import (
    AppendResult,
    Head,
    JournalError,
    JsonlJournal,
    NewRecord,
    Record,
    SessionJournal,
    plain_text,
)
from waybook.journal.records import (
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    Reset,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from waybook.journal.verify import VerifyReport
from waybook.projections import replay

if TYPE_CHECKING:
    from waybook.stores import JournalStore

OK, PROBLEM, USAGE = 0, 1, 2


class UsageError(Exception):
    """A mistake in the command line: exit 2 with the message on stderr."""


def emit_json(value: Any) -> None:
    """One JSON document on stdout (sorted keys, so output is stable for scripts and tests).

    On a terminal every non-ASCII character is escaped, so no control character from a session (C1
    controls, bidirectional overrides) reaches it raw; JSON escapes C0 controls anyway.
    """
    sys.stdout.write(json.dumps(value, sort_keys=True, ensure_ascii=sys.stdout.isatty()) + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"waybook: {visible(message)}\n")


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


def guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn typed errors into diagnostics on stderr and the right exit code."""

    @functools.wraps(run)
    def wrapper(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except BrokenPipeError:
            raise  # the reader went away (`| head`): cli.main ends quietly
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
    """Open a journal for reading: the file at `path`, or with `store` the journal `path` names there.

    A JSONL file (alone or in a directory store) is opened read-only: nothing is created or changed.
    """
    if store is not None:
        return open_in_store(store, str(path))
    from waybook.commands.journal_files import open_journal_file

    return open_journal_file(path)


# --- --store URL JOURNAL_ID ---------------------------------------------------------------------------


def add_store_option(parser: argparse.ArgumentParser, *, what: str = "PATH") -> None:
    """`--store URL`: the journals are in the store at URL and each PATH is a journal id."""
    parser.add_argument(
        "--store",
        metavar="URL",
        help=f"the store holding the journal (file:DIR, sqlite:FILE, postgresql://...); {what} is its id",
    )


def connect_store(url: str) -> JournalStore:
    """Open an existing store for a command; a missing file: or sqlite: store is a usage error (a
    command never creates one by mistake)."""
    from waybook.stores import StoreArgumentError, open_store

    scheme, _, rest = url.partition(":")
    location = Path(rest.split("?", 1)[0].removeprefix("//"))
    if scheme == "file" and not (location / "catalog.jsonl").is_file():
        msg = f"{url}: no directory store there (no catalog.jsonl)"
        raise UsageError(msg)
    if scheme == "sqlite" and not location.is_file():
        msg = f"{url}: no SQLite store there"
        raise UsageError(msg)
    try:
        return open_store(url)
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


def journal_file_in_store(store: JournalStore, journal_id: str) -> Path | None:
    """The JSONL file of a journal in a directory store (None for other stores)."""
    from waybook.stores import DirectoryStore, StoreArgumentError

    if not isinstance(store, DirectoryStore):
        return None
    if not store.exists(journal_id):
        store.open(journal_id)  # raises the store's typed error (unknown, purged)
    try:
        return store.path_of(journal_id)
    except StoreArgumentError as exc:
        raise UsageError(str(exc)) from exc


def open_in_store(url: str, journal_id: str) -> SessionJournal:
    """The journal `journal_id` of the store at `url`, closing the store when it is closed."""
    from waybook.stores import StoreArgumentError

    store = connect_store(url)
    try:
        path = journal_file_in_store(store, journal_id)
        journal: SessionJournal = JsonlJournal(path, readonly=True) if path else store.open(journal_id)
    except StoreArgumentError as exc:
        store.close()
        raise UsageError(str(exc)) from exc
    except BaseException:
        store.close()
        raise
    return _InStore(journal, store)


def verify_in_store(url: str, journal_id: str) -> VerifyReport:
    """`verify` for a journal in a store: a directory store's file is verified like any JSONL file."""
    from waybook.journal import verify, verify_file
    from waybook.stores import DatabaseJournal, DatabaseStore, StoreArgumentError

    with connect_store(url) as store:
        try:
            path = journal_file_in_store(store, journal_id)
            if path is not None:
                return verify_file(path)
            if isinstance(store, DatabaseStore):  # read the stored lines without proving them first
                if not store.exists(journal_id):
                    store.open(journal_id)  # raises the typed error: unknown or purged
                return verify(DatabaseJournal(store.engine, journal_id))
            with store.open(journal_id) as journal:
                return verify(journal)
        except StoreArgumentError as exc:
            raise UsageError(str(exc)) from exc


def file_to_repair(url: str, journal_id: str) -> Path | None:
    """The file `waybook repair --store` works on; None (having said why) for stores without files."""
    with connect_store(url) as store:
        path = journal_file_in_store(store, journal_id)
        if path is None:
            sys.stdout.write(
                f"{journal_id}: no damage; nothing to repair (a database store commits whole transactions, "
                "so it never has a torn tail)\n"
            )
        return path


def import_into_store(url: str, journal_id: str, staging: SessionJournal) -> None:
    """Copy a validated journal into a new journal of the store at `url` (created if missing), with its
    own header: the records are sealed again to the same bytes, so every digest is kept."""
    from waybook.journal import GENESIS, Header
    from waybook.stores import JournalExistsError, StoreArgumentError, open_store

    records = list(staging.read())
    header = records[0].body if records else None
    role = header.role if isinstance(header, Header) else "session"
    metadata = dict(header.metadata) if isinstance(header, Header) else {}
    try:
        with open_store(url) as store:
            journal = store.create(journal_id, role=role, metadata=metadata, header=False)
            with journal:
                batch = [NewRecord(id=r.id, at=r.at, body=r.body) for r in records]
                journal.append(batch, expected=GENESIS)
    except (StoreArgumentError, JournalExistsError) as exc:
        raise UsageError(str(exc)) from exc


class _InStore:
    """A journal that closes its store with it."""

    def __init__(self, journal: SessionJournal, store: JournalStore) -> None:
        self._journal = journal
        self._store = store

    @property
    def name(self) -> str:
        return self._journal.name

    def head(self) -> Head:
        return self._journal.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        return self._journal.append(records, expected=expected)

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        return self._journal.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self._journal.read_lines(after, limit)

    def flush(self) -> None:
        self._journal.flush()

    def close(self) -> None:
        try:
            self._journal.close()
        finally:
            self._store.close()

    def __enter__(self) -> _InStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    elif isinstance(body, Header):
        text = f"journal {body.journal} by {body.creator}"
    else:
        text = ""
    text = visible(" ".join(text.split()), one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


PROGRESS_THRESHOLD = 20_000
"""Replays of at least this many records show a progress bar (on a terminal only)."""


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
