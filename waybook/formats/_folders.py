"""What an import of a session's files gives back, the same for every format that reads folders.

A session file imports as an `ImportedSession`: its own journal, then one per sub-agent transcript found
beside it (Claude Code). A folder of sessions (Claude Code's `~/.claude/projects`, Codex's
`~/.codex/sessions`) imports as a `FolderImport`: one `ImportedSession` per session file, in path order,
and, with `lenient`, the files skipped for not being of the format, each with the reason. Each format's
`import_folder` finds its files; `each_session` here imports them alike, one at a time (each format's
`sessions_in_folder` gives them so). Nothing is written: every journal comes back as records, for the
caller to validate and write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import attrs

from waybook.formats._foreign import ImportReport, NotThisFormatError
from waybook.formats._source_files import RefusedFileError
from waybook.model import JournalError, NewRecord

Progress = Callable[[int, int], None]
"""Called as `progress(done, total)`: once with 0 before the first session file, then after each."""


@attrs.frozen
class ImportedJournal:
    """One journal an import makes: its id, its records, the report of its source file, that file."""

    journal: str
    records: tuple[NewRecord, ...]
    report: ImportReport
    source: Path


@attrs.frozen
class ImportedSession:
    """A session file's journal and its sub-agents' (each linked from the session's records)."""

    source: Path
    journal: ImportedJournal
    subagents: tuple[ImportedJournal, ...] = ()

    @property
    def journals(self) -> tuple[ImportedJournal, ...]:
        """The session's journal first, then its sub-agents'."""
        return (self.journal, *self.subagents)


@attrs.frozen
class SkippedFile:
    """A file of a folder that is not a session of the format, skipped under `lenient`."""

    path: Path
    reason: str


@attrs.frozen
class FolderImport:
    """Every session of a folder, and the files skipped under `lenient`."""

    folder: Path
    sessions: tuple[ImportedSession, ...]
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def journals(self) -> tuple[ImportedJournal, ...]:
        """Every journal, session by session (each session's own first)."""
        return tuple(journal for session in self.sessions for journal in session.journals)


class SourceFileError(JournalError, ValueError):
    """One file of an import (a session of a folder, a sub-agent transcript beside a session) cannot be
    imported; nothing of the import was written. `path` is the file, `cause` the error it gave."""

    def __init__(self, path: Path, cause: JournalError) -> None:
        self.path = path
        self.cause = cause
        super().__init__(f"{path}: {cause} (nothing of this import was written)")


def each_session(
    files: Sequence[Path],
    import_one: Callable[[Path], ImportedSession],
    *,
    lenient: bool,
    progress: Progress | None = None,
) -> Iterator[ImportedSession | SkippedFile]:
    """`import_one` of every file, in order, one at a time: a caller that writes each session before
    asking for the next holds one session's records, whatever the folder's size. A file not of the
    format is skipped under `lenient` (yielded as a `SkippedFile`) and stops the import otherwise; any
    other error stops it, as a `SourceFileError` naming the file (a `RefusedFileError` as it is)."""
    if progress is not None:
        progress(0, len(files))
    for done, file in enumerate(files, start=1):
        item: ImportedSession | SkippedFile
        try:
            item = import_one(file)
        except NotThisFormatError as exc:
            if not lenient:
                raise SourceFileError(file, exc) from exc
            item = SkippedFile(file, exc.why)
        except (SourceFileError, RefusedFileError):
            raise
        except JournalError as exc:
            raise SourceFileError(file, exc) from exc
        yield item
        if progress is not None:
            progress(done, len(files))
