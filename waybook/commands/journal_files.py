"""Opening a journal file for a read command: say what is wrong with it, never print nothing quietly.

A file whose first line is not a waybook header is "not a waybook journal" (exit 1), not an empty
session. A torn tail is reported on stderr (exit 1) while the complete records before it are still
shown: detection is not repair.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

from waybook.codecs import FIRST_LINE_START, decode_record
from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.terminal import plural
from waybook.journal import DamageReporting, JsonlJournal, VerifyReport
from waybook.model import CorruptJournalError, DecodeError, Header, NotAJournalError

HEADER_SNIFF = 1 << 20
"""How much of a file is read to see whether its first line is a waybook header."""


def starts_with_header(path: Path) -> bool:
    """Whether `path` is a regular file whose first line decodes as a waybook header record (seq 1),
    or begins one that was cut short. A header that decodes but fails its digest is a damaged journal,
    not a foreign file."""
    try:
        with path.open("rb") as file:
            chunk = file.read(HEADER_SNIFF)
    except OSError:
        return False
    first = chunk.split(b"\n", 1)[0]
    if b"\n" not in chunk and FIRST_LINE_START.startswith(first[: len(FIRST_LINE_START)]) and first:
        return True  # a header cut short while it was written: a torn journal, which repair can fix
    try:
        record = decode_record(first)
    except DecodeError:
        return False
    return record.seq == 1 and isinstance(record.body, Header)


def open_journal_file(path: Path, *, keep: bool = True) -> JsonlJournal:
    """Open `path` read-only, refusing a missing path, a directory and a file that is not a journal.
    Every byte is proved once, and the journal's reads are served from the bytes the proof read (unless
    `keep=False`: a check that reads nothing after it keeps nothing)."""
    journal, _ = open_proven_file(path, keep=keep)
    return journal


def open_proven_file(
    path: Path, *, prefix: bool = False, keep: bool = True
) -> tuple[JsonlJournal, VerifyReport]:
    """`open_journal_file`, with the chain report of the same pass (`waybook verify`'s). With `prefix`, a
    journal damaged before its last record opens as its proven prefix instead of raising."""
    check_journal_file(path)
    try:
        journal, report = JsonlJournal.open_proven(path, read_prefix=prefix, keep=keep)  # the whole file
    except CorruptJournalError as exc:
        if exc.seq == 1 and exc.offset == 0 and not starts_with_header(path):
            raise _not_a_journal(path, exc.reason) from None
        raise
    damage = journal.damage
    if damage is not None and damage.seq == 1 and damage.offset == 0 and not starts_with_header(path):
        journal.close()
        raise _not_a_journal(path, damage.reason)
    if report.head.seq == 0 and damage is None:
        journal.close()
        raise _not_a_journal(path, EMPTY)
    return journal, report


EMPTY = "the file is empty"
"""Why a 0-byte file is not a journal: every journal starts with its header record."""


def check_journal_file(path: Path) -> None:
    """Refuse (a UsageError naming `path`) what cannot be a journal file: nothing there, a folder, a
    FIFO, a device or a socket (read, it would block or never end), or a path the system cannot follow."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        msg = f"{path}: no such journal file" + (" (a link to nothing)" if path.is_symlink() else "")
        raise UsageError(msg) from None
    except OSError as exc:
        msg = f"{path}: cannot be read ({exc.strerror or exc})"
        raise UsageError(msg) from None
    if stat.S_ISDIR(mode):
        msg = f"{path}: is a directory, not a journal file"
        raise UsageError(msg)
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        msg = f"{path}: is {kind}, not a journal file"
        raise UsageError(msg)


def _not_a_journal(path: Path, reason: str) -> NotAJournalError:
    """The error for a file that is not a journal, saying which import reads it if it is a session of
    a format waybook imports."""
    from waybook.formats import import_hint

    error = NotAJournalError(path=str(path), reason=reason)
    hint = import_hint(path)
    if hint:
        error.args = (str(error) + hint,)
    return error


def damage_status(journal: Any) -> int:
    """Say on stderr that a journal's tail is torn (exit 1); the records shown were the complete ones.

    Only a JSONL journal can have a torn tail; a database store commits whole transactions.
    """
    damage = journal.damage if isinstance(journal, DamageReporting) else None
    if damage is None:
        return OK
    warn(
        f"{journal.name}: torn tail at byte {damage.offset} (would be seq {damage.seq}): {damage.reason}; "
        f"only the complete records before it ({plural(damage.seq - 1, 'record')}) were read. "
        f"`waybook repair {journal.name}` quarantines the torn bytes"
    )
    return PROBLEM


def subagent_file(path: Path, journal_id: str) -> Path | None:
    """Where the sub-agent journal `journal_id` of the session file `path` is: `<journal id>.jsonl` beside
    it, as `waybook import` writes it. None for an id that is not one plain file name (a link's journal
    id is the session's own text: it never leads out of the folder) or a file that is not there."""
    name = f"{journal_id}.jsonl"
    if journal_id in ("", ".", "..") or Path(name).name != name or "\\" in name or "\x00" in name:
        return None
    beside = path.parent / name
    return beside if beside.is_file() else None
