"""Erasing content from a JSONL journal in place, and finishing an erasure a crash interrupted.

An erased line keeps its length (docs/erasure.md), so erasing overwrites each taken record's sealed
prefix where it is: the file, its size, every other byte and every offset stay, and other processes that
hold the journal open keep working. Under the journal's exclusive lock:

1. plan (`waybook.journal._erasure.plan_erasure`) and seal the erasure records;
2. write the marker beside the journal (`<journal>.erasing`, atomically, fsynced): the journal file's
   identity, where each erasure line goes and its digest, and each region to overwrite with its bytes;
3. append the erasure records and fsync them (whatever the durability policy);
4. overwrite each region (a descriptor without O_APPEND; `pwrite`) and fsync;
5. remove the checkpoint sidecar (it vouched for bytes that changed), then the marker.

A crash before 2 leaves the file as it was. After 2, the marker says what to do: an open for writing
(or `finish_marker`) reads it first, under the exclusive lock. If every erasure line is in the file where
the marker says, with its digest, the erasure was committed: each region is overwritten again (the same
bytes: idempotent) and synced, and steps 5 follow. If not, nothing was overwritten (step 4 comes after
the fsync of step 3), so the marker is stale and removed. A read-only open refuses the journal while the
marker is there (`ErasureInterruptedError`), since a region may be half written.
"""

from __future__ import annotations

import contextlib
import os
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, Protocol

import msgspec

from waybook._files import fsync_dir, replace_private
from waybook.codecs import decode_record, line_digest
from waybook.journal._clock import new_id, utc_now
from waybook.journal._erasure import (
    ErasureReceipt,
    ErasureRequest,
    erasure_check,
    pending_lines,
    plan_erasure,
    receipt_of,
    records_at,
)
from waybook.journal._jsonl._checkpoint import checkpoint_path
from waybook.journal._jsonl._file import JournalFile
from waybook.journal._ledger import Ledger, Plan
from waybook.model import (
    AppendResult,
    ErasureInterruptedError,
    Head,
    Header,
    IntegrityError,
    NewRecord,
    Record,
    StorageError,
)


class JsonlJournal(Protocol):
    """What erasing needs of `waybook.journal._jsonl._journal.JsonlJournal` (a protocol, so that this
    module, which the journal imports, does not import it back)."""

    _path: Path
    _file: JournalFile
    _ledger: Ledger
    _offsets: array[int]
    _end: int

    @property
    def name(self) -> str: ...

    def _lines_in(self, after: int, count: int) -> list[bytes]: ...

    def _forget_prefix(self) -> None: ...

    def _records_range(self, after: int, limit: int) -> list[Record]: ...

    def _append_planned(
        self, records: Sequence[NewRecord], expected: Head
    ) -> tuple[AppendResult, int | None]: ...


MARKER_SUFFIX: Final = ".erasing"

Step = Callable[[str], None]
"""Called with the name of each step an erasure reaches (crash tests stop the process there)."""


def _no_step(name: str) -> None:
    return


class Marker(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What an erasure in progress will have done: the file it changes, the erasure lines it appends
    (offset, length, digest) and the regions it overwrites (offset, bytes)."""

    identity: tuple[int, int]
    erasures: tuple[tuple[int, int, str], ...]
    regions: tuple[tuple[int, str], ...]


_MARKER_DECODER: Final = msgspec.json.Decoder(Marker)


def marker_path(journal: Path) -> Path:
    return Path(os.fspath(journal) + MARKER_SUFFIX)


def erase(journal: JsonlJournal, request: ErasureRequest, *, on_step: Step = _no_step) -> ErasureReceipt:
    """Erase as `request` says (the caller holds the journal's mutex and exclusive lock, and has taken in
    the file's tail and refused its damage)."""
    name = journal.name
    head = journal._ledger.head
    lines_in = journal._lines_in
    found = records_at(lines_in, request.seqs, lambda line: decode_record(line, where=name))
    plan = plan_erasure(name, request, found, head, ids=new_id, clock=utc_now)
    journal_id = _journal_id(journal)
    if not plan.targets:
        return receipt_of(journal_id, (), (), plan.skipped)
    on_step("planned")
    sealed = journal._ledger.plan(plan.erasures, head, journal._records_range)
    assert isinstance(sealed, Plan), "fresh ids at the head: never an exact retry"
    first = head.seq + 1
    offsets = journal._offsets
    new_lines = plan.erased_lines(first)
    end = journal._end
    placed: list[tuple[int, int, str]] = []
    for record, line in zip(sealed.result.records, sealed.lines, strict=True):
        placed.append((end, len(line), record.digest))
        end += len(line) + 1
    regions = []
    for (seq, line), target in zip(new_lines, plan.targets, strict=True):
        size = target.entry.blocks * 64
        regions.append((offsets[seq - 1], line[:size].decode("ascii")))
    marker = Marker(journal._file.identity, tuple(placed), tuple(regions))
    write_marker(journal._path, marker)
    on_step("marked")
    result, _ = journal._append_planned(plan.erasures, head)
    journal._file.fsync(journal._ledger.head, result)
    on_step("appended")
    overwrite(journal, marker, on_step)
    erased = [decode_record(line, where=name) for _, line in new_lines]
    return receipt_of(journal_id, result.records, erased, plan.skipped)


def finish_pending(journal: JsonlJournal, *, on_step: Step = _no_step) -> tuple[int, ...]:
    """Erase the records erasure records name whose content is still there (an erasure interrupted before
    its marker, or whose marker was removed by hand); the caller holds the exclusive lock."""
    name = journal.name
    head = journal._ledger.head
    check = erasure_check(journal._lines_in(0, head.seq))
    seqs = sorted(check.pending)
    if not seqs:
        return ()
    found = records_at(journal._lines_in, seqs, lambda line: decode_record(line, where=name))
    erased = pending_lines(name, check, found)
    offsets = journal._offsets
    regions = tuple(
        (offsets[seq - 1], line[: check.pending[seq][1].blocks * 64].decode("ascii")) for seq, line in erased
    )
    marker = Marker(journal._file.identity, (), regions)
    write_marker(journal._path, marker)
    on_step("marked")
    overwrite(journal, marker, on_step)
    return tuple(seqs)


def _journal_id(journal: JsonlJournal) -> str:
    (line,) = journal._lines_in(0, 1)
    header = decode_record(line, where=journal.name).body
    return header.journal if isinstance(header, Header) else journal.name


def write_marker(path: Path, marker: Marker) -> None:
    target = marker_path(path)
    try:
        replace_private(target, msgspec.json.encode(marker))
        fsync_dir(target.parent)
    except OSError as exc:
        msg = f"{path}: cannot write the erasure marker {target.name} ({exc.strerror or exc}); nothing erased"
        raise StorageError(msg) from exc


def overwrite(journal: JsonlJournal, marker: Marker, on_step: Step = _no_step) -> None:
    """Steps 4 and 5: overwrite the marker's regions, fsync, drop the checkpoint and the marker."""
    path = journal._path
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        msg = f"{path}: cannot open the journal to erase: {exc.strerror or exc}; the marker stays"
        raise StorageError(msg) from exc
    try:
        stat = os.fstat(fd)
        if (stat.st_dev, stat.st_ino) != tuple(marker.identity):
            msg = f"{path}: the journal file was replaced since the erasure began; nothing was overwritten"
            raise IntegrityError(msg)
        for index, (offset, data) in enumerate(marker.regions):
            raw = data.encode("ascii")
            done = 0
            while done < len(raw):
                done += os.pwrite(fd, raw[done:], offset + done)
            on_step(f"region {index + 1} of {len(marker.regions)}")
        os.fsync(fd)
    except OSError as exc:
        msg = f"{path}: erasing failed ({exc.strerror or exc}); the marker stays, reopen to finish"
        raise StorageError(msg) from exc
    finally:
        os.close(fd)
    on_step("overwritten")
    journal._forget_prefix()
    with contextlib.suppress(FileNotFoundError):
        checkpoint_path(path).unlink()
    on_step("checkpoint removed")
    remove_marker(path)
    on_step("done")


def remove_marker(path: Path) -> None:
    target = marker_path(path)
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
        fsync_dir(target.parent)


def read_marker(path: Path) -> Marker | None:
    """The marker beside `path`, None if there is none; an unreadable marker is an integrity error."""
    target = marker_path(path)
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        msg = f"{path}: cannot read the erasure marker {target.name}: {exc.strerror or exc}"
        raise StorageError(msg) from exc
    try:
        return _MARKER_DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        msg = f"{path}: the erasure marker {target.name} is damaged ({exc}); move it aside and run verify"
        raise ErasureInterruptedError(msg, path=str(path)) from exc


def marker_exists(path: Path) -> bool:
    return os.path.lexists(marker_path(path))


def interrupted(path: Path) -> ErasureInterruptedError:
    msg = (
        f"{path}: an erasure of this journal was interrupted (the marker {marker_path(path).name} is beside "
        f"it) and may have left records half overwritten; run `waybook erase --resume {path}` or open the "
        "journal for writing, which finishes it"
    )
    return ErasureInterruptedError(msg, path=str(path))


def finish_marker(journal: JsonlJournal) -> bool:
    """Finish (or drop, if it never committed) an erasure a marker describes; True if there was one.
    The caller holds the journal's exclusive lock."""
    marker = read_marker(journal._path)
    if marker is None:
        return False
    read_at = journal._file.read_at
    committed = tuple(journal._file.identity) == tuple(marker.identity) and all(
        _line_is(read_at, offset, length, digest) for offset, length, digest in marker.erasures
    )
    if not committed:
        remove_marker(journal._path)  # steps 3 and 4 never happened: the file is as it was
        return True
    for offset, data in marker.regions:
        current = read_at(len(data) + 1, offset)
        if not current.startswith((b'{"salt":"', b'{"erased":')) or not current.endswith(b'"'):
            msg = (
                f"{journal.name}: byte {offset} is not a record the erasure marker names; nothing was "
                "overwritten (move the marker aside and run verify)"
            )
            raise ErasureInterruptedError(msg, path=journal.name)
    overwrite(journal, marker)
    return True


def _line_is(read_at: Callable[[int, int], bytes], offset: int, length: int, digest: str) -> bool:
    data = read_at(length + 1, offset)
    return len(data) == length + 1 and data.endswith(b"\n") and line_digest(data[:-1]) == digest
