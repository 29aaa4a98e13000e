"""Following one session file into the store as its agent writes it: `waybook watch`'s core.

A `Follower` reads its file from where it stopped, feeds the new complete lines to the format's growing
import (waybook.formats._growing), and appends to the session's journal (`Lane`) the records no later line
can change. Once the file has not changed for `settle` seconds, what the file's end closes (the message
it ended on) is appended too; a later line must agree with it, or the session starts again in a new
journal. A Claude Code session's follower also follows the sub-agent transcripts beside it (`_Child`):
each is imported once its session's import links it (its header names the session), and a sub-agent
found after the session went on past where a whole-file import links it starts the session's import
again from the first line.

Before reading, the follower checks that the file is the one it read (device and inode), that it did not
shrink, and that the last line it took is still there (its SHA-256). A file replaced under the same name,
truncated or rewritten is imported again from its first line as a new generation: a new journal,
`<first journal>.v2`, `.v3`, ..., whose catalog entry names the journal it replaces (`watch.replaces`);
the old journal is left as it was. So is a source whose records stop agreeing with its journal.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from waybook.commands.growth import JournalDivergedError
from waybook.commands.watch_cursor import Cursor, Cursors, line_digest
from waybook.commands.watch_lane import Lane
from waybook.formats import (
    GrowingImport,
    JsonLines,
    RefusedFileError,
    complete_lines,
    naming_parent,
    read_regular_from,
)
from waybook.formats.claude_code import GrowingTranscript, SubagentStart, subagent_journal
from waybook.formats.codex import GrowingRollout
from waybook.formats.pi import GrowingPi
from waybook.model import BatchPlace, Head, JournalError, NewRecord, SubagentLink
from waybook.projections import SubagentParent
from waybook.stores import JournalStore

LINE_FORMATS: Final = ("claude-code", "codex", "pi")


@attrs.frozen
class Event:
    """What one sync did to one journal: records appended, a journal created, a new generation."""

    source: str
    journal: str
    appended: int
    head: int = 0
    """The journal's head seq after the append."""
    created: bool = False
    replaces: str | None = None
    why: str | None = None


@attrs.define
class Context:
    """What every follower of one watcher shares."""

    store: JournalStore
    cursors: Cursors
    settle: float
    lenient: bool = False
    clock: Callable[[], float] = time.time


def new_import(fmt: str, *, lenient: bool, name: str | None) -> GrowingImport:
    if fmt == "claude-code":
        return GrowingTranscript(lenient=lenient, name=name)
    if fmt == "codex":
        return GrowingRollout(lenient=lenient, name=name)
    if fmt == "pi":
        return GrowingPi(lenient=lenient, name=name)
    msg = f"no growing import for {fmt}"
    raise ValueError(msg)


class SourceFailedError(JournalError):
    """A source the watcher cannot import (a line that is not of its format, a file it may not read)."""


class _Reader:
    """A growing import of one file, and how far the file was read: the lines fed, the last one's place
    and digest (to see the file rewritten under the watcher), the file's identity."""

    def __init__(self, path: Path, inside: Path, importer: GrowingImport) -> None:
        self.path = path
        self.inside = inside
        self.importer = importer
        self.fed = 0
        self.line = 0
        self.line_start = 0
        self.line_sha = ""
        self.partial = False  # the last line fed had no newline (taken once the file settled)
        self.identity: tuple[int, int] | None = None
        self.size = 0
        self.mtime = 0.0

    def read(
        self, *, settled: Callable[[float], bool], before_feed: Callable[[], None] = lambda: None
    ) -> str | None:
        """Feed the lines added since the last read. Returns why the file is no longer the one read
        ("replaced", "truncated", "rewritten"), or None. FileNotFoundError when it is gone."""
        base = self.line_start
        data, status = read_regular_from(self.path, start=base, inside=self.inside)
        identity = (status.st_dev, status.st_ino)
        self.size, self.mtime = status.st_size, status.st_mtime
        if self.identity is not None and identity != self.identity:
            return "replaced"
        if status.st_size < self.fed:
            return "truncated"
        taken = self.fed - base
        if self.fed and line_digest(data[:taken].removesuffix(b"\n")) != self.line_sha:
            return "rewritten"
        if self.partial:
            if data[taken : taken + 1] not in (b"", b"\n"):
                return "rewritten"  # the line taken without its newline went on
            if data[taken : taken + 1] == b"\n":
                taken, self.fed, self.partial = taken + 1, self.fed + 1, False
        self.identity = identity
        if self.partial:
            return None
        lines = list(complete_lines(data, start=taken, first=self.line + 1))
        before_feed()
        for number, end, line in lines:
            self._feed(number, base + end - len(line) - 1, line)
            self.fed = base + end
        rest = data[(lines[-1][1] if lines else taken) :]
        if (
            rest.strip()
            and settled(self.mtime)
            and JsonLines(source="", lenient=True).take(0, rest) is not None
        ):
            self._feed(self.line + 1, self.fed, rest)  # a last line without its newline, once settled
            self.fed += len(rest)
            self.partial = True
        return None

    def _feed(self, number: int, start: int, line: bytes) -> None:
        self.importer.feed(number, line)
        self.line, self.line_start, self.line_sha = number, start, line_digest(line)

    def check(self, cursor: Cursor) -> str | None:
        """Whether the file is still the one `cursor` read (before this reader read anything)."""
        try:
            data, status = read_regular_from(
                self.path,
                start=cursor.line_start,
                inside=self.inside,
                head=cursor.offset - cursor.line_start + 1,
            )
        except FileNotFoundError:
            return "replaced"
        if (status.st_dev, status.st_ino) != (cursor.device, cursor.inode):
            return "replaced"
        if status.st_size < cursor.offset:
            return "truncated"
        taken = cursor.offset - cursor.line_start
        if cursor.offset and line_digest(data[:taken].removesuffix(b"\n")) != cursor.line_sha256:
            return "rewritten"
        return None


class Follower:
    """One session file of `fmt` found under the folder `inside` (and, for a Claude Code session, the
    sub-agent transcripts beside it), followed into one journal of the store."""

    def __init__(self, path: Path, fmt: str, context: Context, *, inside: Path) -> None:
        self.path = path
        self.fmt = fmt
        self.context = context
        self.inside = inside
        self.cursor = context.cursors.load(str(path))
        self.generation = self.cursor.generation if self.cursor else 1
        self.base = self.cursor.base if self.cursor else ""
        self.replaces = self.cursor.replaces if self.cursor else None
        self.failed: str | None = None
        self._reset()

    def _reset(self) -> None:
        name = None if self.generation == 1 else f"{self.base}.v{self.generation}"
        self.name = name
        self.reader = _Reader(
            self.path, self.inside, new_import(self.fmt, lenient=self.context.lenient, name=name)
        )
        self.lane: Lane | None = None
        self.children: dict[Path, _Child] = {}
        self._beside: dict[Path, str | None] = {}
        self.flushed_at: tuple[int, float] | None = None

    @property
    def journal(self) -> str | None:
        return None if self.lane is None else self.lane.journal_id

    def close(self) -> None:
        if self.lane is not None:
            self.lane.close()
        for child in self.children.values():
            child.close()

    # --- syncing --------------------------------------------------------------------------------------

    def sync(self) -> list[Event]:
        """Read what the file (and its sub-agents) gained, append what it makes final; once settled, what
        its end closes. A source that cannot be imported is left, `failed` says why."""
        if self.failed is not None:
            return []
        events: list[Event] = []
        for _ in range(4):  # a new generation, or an import started again, at most a few times a sync
            try:
                return events + self._sync()
            except _LateSubagentError:
                self._restart_import()
            except _SourceChangedError as turn:
                events.append(self._next_generation(turn.why))
            except JournalDivergedError as exc:
                events.append(self._next_generation(f"its records stopped agreeing with the journal ({exc})"))
            except FileNotFoundError:
                return events  # gone: its journal stays; a file made under its name is a new generation
            except RefusedFileError as exc:
                self.failed = str(exc)
                return events
        return events

    def _restart_import(self) -> None:
        """Import the session again from its first line (a sub-agent came too late for the import as it
        went): the journal stays; its records must agree with the new import's, or it is a new
        generation."""
        for child in self.children.values():
            child.close()
        self.children = {}
        self.reader = _Reader(
            self.path, self.inside, new_import(self.fmt, lenient=self.context.lenient, name=self.name)
        )
        self.flushed_at = None

    def _sync(self) -> list[Event]:
        fresh = self.reader.identity is None
        if fresh and self.cursor is not None and self.cursor.generation == self.generation:
            why = self.reader.check(self.cursor)
            if why is not None:
                raise _SourceChangedError(why)
        why = self.reader.read(settled=self._settled, before_feed=self._children_first)
        if why is not None:
            raise _SourceChangedError(why)
        importer = self.reader.importer
        if importer.problems:
            shown = "; ".join(f"line {n}: {w}" for n, w in list(importer.problems)[:3])
            self.failed = (
                f"{self.path}: cannot be imported ({shown}); it is left out (--lenient skips such lines)"
            )
            return []
        events = self._write(fresh)
        for child in self.children.values():
            events += child.sync(self)
        return events

    def _settled(self, mtime: float) -> bool:
        return self.context.clock() - mtime >= self.context.settle

    def _write(self, fresh: bool) -> list[Event]:
        importer = self.reader.importer
        records = importer.records
        if not records:
            return []
        journal = self._journal_id(records[0])
        created = False
        if self.lane is None:
            self.lane = Lane(self.context.store, journal, catalog=self._catalog())
            cursor = self.cursor if self.cursor is not None and self.cursor.journal == journal else None
            head = Head(cursor.records, cursor.head) if cursor is not None and cursor.head else None
            self.lane.attach(
                head=head, final=cursor.final if cursor else 0, records=records, pending=importer.pending
            )
            created = self.lane.head.seq == 0
        settled = self._settled(self.reader.mtime)
        pending = None
        if settled and self.flushed_at != (self.reader.size, self.reader.mtime):
            pending = importer.pending()
            self.flushed_at = (self.reader.size, self.reader.mtime)
        places = _places(importer)
        before = self.lane.head
        appended = self.lane.write(records, pending, places=places)
        if appended or fresh or self.lane.head != before:
            self._save()
        if not appended:
            return []
        return [
            Event(
                str(self.path),
                journal,
                appended,
                created=created,
                replaces=self.replaces if created else None,
            )
        ]

    @property
    def flushed_now(self) -> bool:
        """Whether what the file's end closes was written for the file as it is now."""
        return self.flushed_at == (self.reader.size, self.reader.mtime)

    def settled_open(self) -> bool:
        """Whether a sync now would write what the file's end closes (it settled since the last sync)."""
        return (
            self.lane is not None
            and self.flushed_at != (self.reader.size, self.reader.mtime)
            and self._settled(self.reader.mtime)
        )

    def _journal_id(self, header: NewRecord) -> str:
        if self.fmt == "claude-code":
            journal = header.id
        else:
            journal = header.id if self.generation == 1 else f"{self.base}.v{self.generation}"
        if not self.base:
            self.base = journal
        return journal

    def _catalog(self) -> dict[str, Any]:
        watch: dict[str, Any] = {"source": str(self.path), "format": self.fmt, "generation": self.generation}
        if self.replaces is not None:
            watch["replaces"] = self.replaces
        return {"watch": watch}

    def _save(self) -> None:
        reader, lane = self.reader, self.lane
        assert lane is not None
        assert reader.identity is not None
        self.cursor = Cursor(
            source=str(self.path),
            format=self.fmt,
            journal=lane.journal_id,
            generation=self.generation,
            base=self.base,
            device=reader.identity[0],
            inode=reader.identity[1],
            offset=reader.fed,
            line=reader.line,
            line_start=reader.line_start,
            line_sha256=reader.line_sha,
            final=lane.final,
            records=lane.head.seq,
            head=lane.head.digest,
            replaces=self.replaces,
        )
        self.context.cursors.save(self.cursor)

    def _next_generation(self, why: str) -> Event:
        old = self.journal or (self.cursor.journal if self.cursor and self.cursor.records else None)
        self.close()
        if old is not None and self.base:
            self.generation += 1
            self.replaces = old
        self.cursor = None
        self._reset()
        return Event(str(self.path), old or "", 0, why=f"{why}: imported again as a new journal")

    # --- a Claude Code session's sub-agents ------------------------------------------------------------

    def _children_first(self) -> None:
        """Before the session's new lines are fed: every sub-agent transcript found beside it now (a
        sub-agent that started before a line was written is there when the line is read)."""
        importer = self.reader.importer
        if not isinstance(importer, GrowingTranscript):
            return
        for path in self._subagent_paths():
            if path in self.children:
                continue
            journal = subagent_journal(self.path, b"", path, self.name or self._session_id())
            start = _start(path, journal, self.path.parent)
            if start is None:
                continue  # no line of Claude Code's tree yet: found again on its next change
            self.children[path] = _Child(path, journal, self)
            if not importer.add_subagent(start):
                raise _LateSubagentError

    def _subagent_paths(self) -> list[Path]:
        """SESSION/subagents/agent-*.jsonl, then agent-*.jsonl beside the session naming it (as
        `waybook.formats.claude_code.import_session` finds them)."""
        home = self.path.parent
        found = sorted((home / self.path.stem / "subagents").glob("agent-*.jsonl"))
        session = self._session_id()
        if session is not None:
            for path in sorted(home.glob("agent-*.jsonl")):
                if path not in self._beside:
                    self._beside[path] = _session_of(path, home)
                if self._beside[path] == session:
                    found.append(path)
        return found

    def _session_id(self) -> str | None:
        importer = self.reader.importer
        meta = importer.records[0].body.metadata if importer.records else {}  # type: ignore[union-attr]
        session = meta.get("claude_code", {}).get("sessionId") if isinstance(meta, dict) else None
        if isinstance(session, str):
            return session
        with contextlib.suppress(OSError, RefusedFileError):
            return _session_of(self.path, self.path.parent)
        return None


_HEAD: Final = 1 << 16


class _SourceChangedError(Exception):
    def __init__(self, why: str) -> None:
        self.why = why


class _LateSubagentError(Exception):
    """A sub-agent came too late for the session's import: it starts again from the first line."""


def _start(path: Path, journal: str, home: Path) -> SubagentStart | None:
    from waybook.formats.claude_code import subagent_start

    try:
        data = read_regular_from(path, inside=home, head=_HEAD)[0]
    except (OSError, RefusedFileError):
        return None
    return subagent_start(journal, data[: data.rfind(b"\n") + 1])


def _session_of(path: Path, home: Path) -> str | None:
    """The `sessionId` a transcript's first lines name (None: none yet, or not readable)."""
    try:
        head = read_regular_from(path, inside=home, head=_HEAD)[0]
    except (OSError, RefusedFileError):
        return None
    lines = JsonLines(source="", lenient=True)
    for number, _, line in complete_lines(head):
        value = lines.take(number, line)
        if value is not None and isinstance(value.get("sessionId"), str):
            return str(value["sessionId"])
    return None


def _places(importer: GrowingImport) -> Sequence[BatchPlace | None] | None:
    places = getattr(importer, "places", None)
    return places if places else None


class _Child:
    """A sub-agent transcript beside a Claude Code session, imported once the session's import links it."""

    def __init__(self, path: Path, journal: str, session: Follower) -> None:
        self.path = path
        self.journal = journal
        self.reader = _Reader(
            path, session.path.parent, GrowingTranscript(lenient=session.context.lenient, name=session.name)
        )
        self.lane: Lane | None = None
        self.parent: SubagentParent | None = None
        self.flushed_at: tuple[int, float] | None = None

    def close(self) -> None:
        if self.lane is not None:
            self.lane.close()

    def sync(self, session: Follower) -> list[Event]:
        why = self.reader.read(settled=session._settled)
        if why is not None:
            msg = f"its sub-agent transcript {self.path.name} was {why}"
            raise _SourceChangedError(msg)
        importer = self.reader.importer
        if importer.problems or not importer.records:
            return []
        if self.lane is None:
            decided = _parent_of(session, self.journal)
            if decided is None:
                return []  # its session has not linked it yet
            parent = decided if isinstance(decided, SubagentParent) else None
            self.parent = parent

            def prepare(record: NewRecord) -> NewRecord:
                return naming_parent(record, parent) if parent is not None else record

            self.lane = Lane(session.context.store, self.journal, prepare=prepare, catalog=session._catalog())
            self.lane.attach(head=None, final=0, records=importer.records, pending=importer.pending)
            created = self.lane.head.seq == 0
        else:
            created = False
            if self.parent is None and isinstance(_parent_of(session, self.journal), SubagentParent):
                msg = f"its sub-agent {self.journal} was linked after it was imported"
                raise _SourceChangedError(msg)
        pending = None
        if session._settled(self.reader.mtime) and self.flushed_at != (self.reader.size, self.reader.mtime):
            pending = importer.pending()
            self.flushed_at = (self.reader.size, self.reader.mtime)
        appended = self.lane.write(importer.records, pending)
        if not appended:
            return []
        return [Event(str(self.path), self.journal, appended, self.lane.head.seq, created=created)]


def _parent_of(session: Follower, journal: str) -> SubagentParent | bool | None:
    """The session that started sub-agent `journal`, as the session's first link to it says; False when
    the session settled without linking it (it imports naming no parent); None while undecided."""
    importer = session.reader.importer
    lane = session.lane
    if not isinstance(importer, GrowingTranscript) or lane is None:
        return None
    link = importer.linked.get(journal)
    if link is None:
        link = next(
            (r.body for r in lane.extra if isinstance(r.body, SubagentLink) and r.body.journal == journal),
            None,
        )
    if link is not None:
        return SubagentParent(lane.journal_id, link.node, link.call_id)
    if session.flushed_now:
        return False
    return None
