"""Blackboard notes as records: the value type, deterministic receipts, errors, and the pure replay.

Every publish is one custom entry of type `waybook.coordination.note` in the board's coordination
journal, its `data` the note's wire form:

    {"key": "B", "status": "done", "value": {...}, "writer": "worker-b", "reason": "",
     "depends": [["A", "<receipt of A>"]], "receipt": "<receipt of B>"}

A note's receipt is the digest of its key, status, value and the receipts of the notes it depended on,
so it is the same in every run that computed the same values, whatever order the workers ran in
(a journal's seqs and digests are not: they depend on scheduling).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs

from waybook.codecs import digest_of
from waybook.model import ConflictError, CustomEntry, JournalError, Record

NOTE_TYPE: Final = "waybook.coordination.note"
STATUSES: Final = ("done", "failed", "cancelled")
Status = Literal["done", "failed", "cancelled"]


class CoordinationError(JournalError):
    """Base of the coordination port's errors."""


class NoteExistsError(CoordinationError, ConflictError):
    """The key was published already (by another worker, or cancelled); the first publish stands."""


class DependencyFailedError(CoordinationError):
    """A note a worker waits for ended as failed or cancelled; the worker must not run."""

    def __init__(self, note: Note) -> None:
        self.note = note
        reason = f": {note.reason}" if note.reason else ""
        super().__init__(f"dependency {note.key!r} is {note.status}{reason}")


class WaitTimeoutError(CoordinationError, TimeoutError):
    """The notes waited for were not all published within the timeout."""


class InvalidNoteError(CoordinationError, ValueError):
    """A publish was given a key, status or value the board does not take. Nothing was written."""


@attrs.frozen
class Note:
    """One published note: its key and outcome, the value (JSON), who wrote it, why (for a failure or a
    cancellation), the receipts of the notes it depended on, its own receipt, and its seq in the
    coordination journal."""

    key: str
    status: Status
    value: Any
    writer: str
    reason: str
    depends: tuple[tuple[str, str], ...]
    receipt: str
    seq: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "done"

    def wire(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "status": self.status,
            "value": self.value,
            "writer": self.writer,
            "reason": self.reason,
            "depends": [list(pair) for pair in self.depends],
            "receipt": self.receipt,
        }


def receipt_of(key: str, status: str, value: Any, depends: Iterable[tuple[str, str]]) -> str:
    """The deterministic receipt of a note (see the module docstring)."""
    return digest_of({"key": key, "status": status, "value": value, "depends": sorted(map(list, depends))})


def make_note(
    key: object,
    status: object,
    value: Any,
    *,
    writer: object,
    reason: object = "",
    depends: Iterable[Note] = (),
) -> Note:
    """A note to publish, checked before anything is written."""
    if not isinstance(key, str) or not key:
        msg = f"a note's key is a non-empty string, not {key!r}"
        raise InvalidNoteError(msg)
    if status not in STATUSES:
        msg = f"a note's status is one of {', '.join(STATUSES)}, not {status!r}"
        raise InvalidNoteError(msg)
    if not isinstance(writer, str) or not isinstance(reason, str):
        msg = "a note's writer and reason are strings"
        raise InvalidNoteError(msg)
    pairs = tuple(sorted((dep.key, dep.receipt) for dep in depends))
    try:
        receipt = receipt_of(key, str(status), value, pairs)
    except (TypeError, ValueError) as exc:
        msg = f"note {key!r}: its value is not JSON data ({exc})"
        raise InvalidNoteError(msg) from exc
    return Note(key, status, value, writer, reason, pairs, receipt)


def note_of(record: Record) -> Note | None:
    """The note a coordination journal record holds (None for any other record)."""
    body = record.body
    if not isinstance(body, CustomEntry) or body.type != NOTE_TYPE or not isinstance(body.data, Mapping):
        return None
    data = body.data
    try:
        depends = tuple((str(k), str(r)) for k, r in data.get("depends", ()))
        return Note(
            key=str(data["key"]),
            status=data["status"],
            value=data.get("value"),
            writer=str(data.get("writer", "")),
            reason=str(data.get("reason", "")),
            depends=depends,
            receipt=str(data["receipt"]),
            seq=record.seq,
        )
    except (KeyError, TypeError, ValueError):
        return None


def replay_notes(records: Iterable[Record]) -> dict[str, Note]:
    """The board a coordination journal's records replay to: the first note of each key, by key."""
    notes: dict[str, Note] = {}
    for record in records:
        note = note_of(record)
        if note is not None and note.key not in notes:
            notes[note.key] = note
    return notes


def check_receipts(notes: Mapping[str, Note]) -> list[str]:
    """Problems with a replayed board's receipts: each must follow from its note and its dependencies'."""
    problems = []
    for note in notes.values():
        if receipt_of(note.key, note.status, note.value, note.depends) != note.receipt:
            problems.append(f"{note.key}: its receipt does not match its contents")
        for key, receipt in note.depends:
            dep = notes.get(key)
            if dep is None or dep.receipt != receipt or (dep.seq and note.seq and dep.seq > note.seq):
                problems.append(
                    f"{note.key}: depends on {key!r} with a receipt the board does not hold before it"
                )
    return problems
