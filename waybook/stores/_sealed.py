"""Creating journals whole from lines already sealed: what an import of a whole home writes.

An import checks each journal in memory (every rule, every record sealed, one record an append), so its
lines are final before the store sees them. Appending them again one by one re-seals every record and
costs a write and a feed line per record, and a `file:` store's create costs its own fsyncs. A
`SealedJournal` carries the lines instead; `DirectoryStore.create_sealed` proves them as an open proves a
file (the chain of seqs, prevs and digests, and the session rules), then writes each journal's file
whole (`write_new_files`: every file of a batch written, then fsynced together, then linked into place,
then their directory fsynced once), and only then catalogues and feeds them. A crash leaves each journal
absent or whole: a file is linked only once its bytes are durable, and a file that is not catalogued yet
is an orphan the store's next open adopts.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

from waybook._files import FILE_MODE, fsync_dir, reclaiming_descriptors, write_all
from waybook.journal import Ledger, iter_chain
from waybook.model import Header
from waybook.stores._catalog import check_journal_id, check_role
from waybook.stores._errors import StoreArgumentError
from waybook.stores._header_id import check_header_names
from waybook.stores._values import SealedJournal

SYNC_THREADS = 16
"""Files of one batch fsynced at once: the filesystem commits their fsyncs together (ext4's journal
commits a group of waiting fsyncs as one), which one after another cost a disk flush each."""


def proved_header(journal: SealedJournal, *, store: str) -> Header:
    """Prove `journal`'s lines as an open proves a journal file (decoded, chained from seq 1, every
    session rule held), that they end at its head and that its header names its id; its header. Raises
    the proof's typed error (DecodeError, BrokenChainError, a RecordValidationError), HeaderMismatchError
    or StoreArgumentError; nothing is written."""
    if not isinstance(journal, SealedJournal):
        msg = f"create_sealed takes SealedJournal values, not {type(journal).__name__}"
        raise StoreArgumentError(msg)
    name = check_journal_id(journal.journal_id)
    data = journal.data
    if type(data) is not bytes or not data.endswith(b"\n"):
        msg = f"{name}: a sealed journal's data is its lines as bytes, each ending in a newline"
        raise StoreArgumentError(msg)
    records = list(iter_chain(data.split(b"\n")[:-1], journal=name))
    ledger = Ledger.empty(name)
    ledger.advance(records)
    if ledger.head != journal.head:
        msg = (
            f"{name}: its lines end at seq {ledger.head.seq} ({ledger.head.digest[:12]}), not at the head "
            f"given (seq {journal.head.seq}, {journal.head.digest[:12]}); nothing was written"
        )
        raise StoreArgumentError(msg)
    header = records[0].body if records else None
    if type(header) is not Header:
        msg = f"{name}: a sealed journal starts with its header record; nothing was written"
        raise StoreArgumentError(msg)
    check_header_names(header, store=store, journal_id=name)
    check_role(header.role)
    return header


def check_distinct(journals: Sequence[SealedJournal]) -> None:
    """StoreArgumentError if two of `journals` have one id."""
    seen: set[str] = set()
    for journal in journals:
        if journal.journal_id in seen:
            msg = f"{journal.journal_id}: named twice among the journals to create; nothing was written"
            raise StoreArgumentError(msg)
        seen.add(journal.journal_id)


def write_new_files(
    files: Sequence[tuple[Path, bytes]],
    *,
    durable: bool,
    on_step: Callable[[str], None] | None = None,
) -> list[Path]:
    """Create each file of `files` holding its bytes, all or nothing each: every one written to a temp file
    beside it, then (`durable`) all fsynced together, then each linked into place (never replacing a
    file: those already there are returned, left alone), then (`durable`) each directory fsynced once.
    `on_step` is told "written", "synced", "linked" (after each link) and "directory synced"."""
    step = on_step or (lambda _name: None)
    temps: list[tuple[int, Path]] = []
    taken: list[Path] = []
    try:
        for path, data in files:
            fd, name = reclaiming_descriptors(functools.partial(_temp_beside, path))
            temps.append((fd, Path(name)))
            os.fchmod(fd, FILE_MODE)
            write_all(fd, data)
        step("written")
        if durable and temps:
            with ThreadPoolExecutor(min(SYNC_THREADS, len(temps))) as pool:
                list(pool.map(os.fsync, [fd for fd, _ in temps]))
        step("synced")
        for (path, _), (_, temp) in zip(files, temps, strict=True):
            try:
                os.link(temp, path)  # unlike rename, link refuses to replace a file another process made
            except FileExistsError:
                taken.append(path)
            step("linked")
        if durable:
            for directory in dict.fromkeys(path.parent for path, _ in files):
                fsync_dir(directory)
        step("directory synced")
        return taken
    finally:
        for fd, temp in temps:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()


TEMP_MARK: Final = ".sealed-"
"""In the name of every temp file `write_new_files` makes (`.ID.jsonl.sealed-XXXX.tmp`), and of no other:
`sweep_temps` removes only those, so it never touches a temp file another writer (an erasure's rewrite,
a checkpoint) is making beside the journals."""


def _temp_beside(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f".{path.name}{TEMP_MARK}", suffix=".tmp", dir=path.parent)


def sweep_temps(directory: Path) -> int:
    """Remove the temp files a killed `write_new_files` left in `directory`; how many. Call it holding the
    lock under which every `write_new_files` of that directory runs (no creator is mid-write then)."""
    swept = 0
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith(".") and TEMP_MARK in name and name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    swept += 1
    return swept
