"""A folder of Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one journal per rollout.

The walk of that tree is here and only here: every `*.jsonl` under the folder is read as a rollout, with
`read_regular` (a regular file, inside the folder). Each journal is named by its rollout's session id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from waybook.formats._folders import (
    FolderImport,
    ImportedJournal,
    ImportedSession,
    Progress,
    SkippedFile,
    each_session,
)
from waybook.formats._source_files import read_regular
from waybook.formats.codex._rollout import import_codex


def import_folder(path: Path, *, lenient: bool = False, progress: Progress | None = None) -> FolderImport:
    """Every rollout under the folder `path`, a journal each, named by session id.

    A file that is not a rollout (a stray `.jsonl`, a file of token counts only) is skipped under
    `lenient` (`FolderImport.skipped`, with the reason); any other failure is a `SourceFileError` naming
    the file. `progress(done, total)` follows the files read.
    """
    found = list(sessions_in_folder(path, lenient=lenient, progress=progress))
    sessions = tuple(item for item in found if isinstance(item, ImportedSession))
    return FolderImport(path, sessions, tuple(item for item in found if isinstance(item, SkippedFile)))


def sessions_in_folder(
    path: Path, *, lenient: bool = False, progress: Progress | None = None
) -> Iterator[ImportedSession | SkippedFile]:
    """`import_folder`'s sessions (and skipped files) one at a time, in path order: a caller that writes
    each before taking the next holds one rollout's records, whatever the folder's size."""

    def one(rollout: Path) -> ImportedSession:
        imported = import_codex(read_regular(rollout, inside=path), lenient=lenient)
        journal = ImportedJournal(imported.records[0].id, imported.records, imported.report, rollout)
        return ImportedSession(rollout, journal)

    return each_session(sorted(path.rglob("*.jsonl")), one, lenient=lenient, progress=progress)
