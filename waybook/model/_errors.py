"""Every error a journal, its codecs or its rules can raise, in one hierarchy under `JournalError`.

Categories (ARCHITECTURE section 3): conflict, integrity (which includes decoding committed bytes),
validation, capacity and storage. Each error carries the data a caller needs to act on it, and its
message says what was wrong and what to do next. A raised error means nothing was written, with one
exception: DurabilityError (an fsync failed after the write), whose records are in the journal but not
known to be durable (docs/journal-contract.md, "Errors, and what each means for the data").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from waybook.model._head import AppendResult, Head


class JournalError(Exception):
    """Base of every error raised by waybook journals."""


# --- conflict -------------------------------------------------------------------------------------


class ConflictError(JournalError):
    """Another writer committed first; re-read the journal and decide again."""


class StaleWriterError(ConflictError):
    """The writer's expected head is not the committed head. Nothing was written."""

    def __init__(self, *, journal: str, expected: Head, actual: Head) -> None:
        self.journal = journal
        self.expected = expected
        self.actual = actual
        super().__init__(self._describe())

    def _describe(self) -> str:
        """The message. A writer that knows more (a thread, a key) subclasses this error, keeps what it
        knows as attributes before calling this constructor, and says it in its own terms here."""
        return (
            f"{self.journal}: stale writer: expected head seq {self.expected.seq} "
            f"({self.expected.digest[:12]}) but the committed head is seq {self.actual.seq} "
            f"({self.actual.digest[:12]}); nothing was written. Read the records after your head "
            "(Session.sync()), decide again, and retry with the new head."
        )


class OverlappingBatchError(ConflictError):
    """A batch reuses ids that are already committed, but is not an exact retry of a committed batch."""

    def __init__(self, *, journal: str, ids: tuple[str, ...]) -> None:
        self.journal = journal
        self.ids = ids
        shown = ", ".join(repr(i) for i in ids[:5])
        msg = (
            f"{journal}: the batch partially overlaps committed records ({shown}); nothing was written. "
            "An exact retry must resend the same records with the head it first presented; otherwise "
            "drop the committed records from the batch and append the rest at the current head."
        )
        super().__init__(msg)


# --- validation -----------------------------------------------------------------------------------


class RecordValidationError(JournalError, ValueError):
    """A record or batch breaks a journal or session rule. Nothing was written."""

    def __init__(self, message: str, *, journal: str = "", record_id: str | None = None) -> None:
        self.journal = journal
        self.record_id = record_id
        prefix = f"{journal}: " if journal else ""
        super().__init__(prefix + message)


class EmptyBatchError(RecordValidationError):
    """An append was given no records."""


class InvalidRecordError(RecordValidationError):
    """A field has a value the wire format does not allow (bad id, timestamp, tag)."""


class DuplicateIdError(RecordValidationError):
    """An id is already used in this journal, or twice in one batch."""


class MisplacedHeaderError(RecordValidationError):
    """The header must be the first record, and only the first."""


class ParentMismatchError(RecordValidationError):
    """A node's parent is not the current leaf."""


class InvalidLeafMoveError(RecordValidationError):
    """A leaf move does not start at the current leaf, or goes to an unknown node."""


class PartialAssistantError(RecordValidationError):
    """An assistant entry without a terminal stop reason (a streaming partial) was offered."""


class UnknownNodeError(RecordValidationError):
    """A record refers to a node id that is not in the journal."""


class ToolPairingError(RecordValidationError):
    """A turn's tool results do not answer its tool calls one for one (unknown, repeated or missing)."""


class MemoryRuleError(RecordValidationError):
    """A memory record breaks a memory rule (docs/memory.md): a hostile path, a digest that is not the
    content's, a read-only file, a limit, a file and a directory at one path, a reused request id.

    `code` is the Memory port's error code for the same mistake (INVALID_PATH, LIMIT_EXCEEDED, ...), so
    every writer gets the same answer; `path` and `details` say where and how.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        journal: str = "",
        record_id: str | None = None,
        path: str | None = None,
        details: dict[str, object] | None = None,
    ) -> None:
        self.code = code
        self.path = path
        self.details = details
        super().__init__(message, journal=journal, record_id=record_id)


class InvalidArgumentError(JournalError, TypeError):
    """A journal call got an argument of the wrong type (a batch that is not a sequence of NewRecord, an
    `expected` that is not a Head, a cursor that is not an int). Nothing was read or written."""


# --- integrity ------------------------------------------------------------------------------------


class IntegrityError(JournalError):
    """Committed bytes do not prove a complete, unaltered history."""


class BrokenChainError(IntegrityError):
    """A record's seq, prev or digest does not follow from the record before it."""

    def __init__(self, *, journal: str, seq: int, reason: str, offset: int | None = None) -> None:
        self.journal = journal
        self.seq = seq
        self.reason = reason
        self.offset = offset
        where = f" at byte {offset}" if offset is not None else ""
        msg = (
            f"{journal}: chain broken at seq {seq}{where}: {reason}. The history is not the one that was "
            "committed; do not append. Run `waybook verify` to locate the damage."
        )
        super().__init__(msg)


class BrokenBatchError(BrokenChainError):
    """Records of a multi-record batch are missing: a batch was cut short (a crash mid-write) or spliced.

    `seq` is where the damage starts: the first record of the cut batch, whose records must all be
    treated as uncommitted; `record_seq` is the record that showed it.
    """

    def __init__(self, *, journal: str, seq: int, reason: str, record_seq: int | None = None) -> None:
        self.record_seq = seq if record_seq is None else record_seq
        super().__init__(journal=journal, seq=seq, reason=reason)


class DecodeError(IntegrityError, ValueError):
    """Bytes are not a record this codec knows. Decoding fails closed: nothing is guessed.

    `where` names the line (1-based) or seq when the caller knows it; `field` is the JSON path.
    """

    def __init__(
        self, reason: str, *, tag: str | None = None, field: str | None = None, where: str = ""
    ) -> None:
        self.reason = reason
        self.tag = tag
        self.field = field
        self.where = where
        parts = [p for p in (where, f"tag {tag!r}" if tag else "", f"field {field}" if field else "") if p]
        context = f" ({', '.join(parts)})" if parts else ""
        msg = f"cannot decode record{context}: {reason}"
        super().__init__(msg)


class UnknownTagError(DecodeError):
    """The record's wire tag is not registered; it may come from a newer waybook. Upgrade to read it."""


class MissingFieldError(DecodeError):
    """A required wire field is absent."""


class UnknownFieldError(DecodeError):
    """A wire field this version does not know; strict records refuse it rather than drop it."""


class WrongTypeError(DecodeError):
    """A wire field has the wrong JSON type or an invalid value."""


class InvalidUtf8Error(DecodeError):
    """The bytes are not valid UTF-8."""


class MalformedJsonError(DecodeError):
    """The bytes are not one complete JSON object."""


class _DamagedRecordError(IntegrityError):
    """A damaged record of a journal file: where it is (`path`, byte `offset`, the `seq` it has or would
    have) and why (`reason`); the subclass says what it means for reads and appends (`_describe`)."""

    def __init__(self, *, path: str, offset: int, seq: int, reason: str) -> None:
        self.path = path
        self.offset = offset
        self.seq = seq
        self.reason = reason
        super().__init__(self._describe())

    def _describe(self) -> str:
        raise NotImplementedError


class TornTailError(_DamagedRecordError):
    """The final record is incomplete or damaged. Reads of the prefix work; appends need `repair()`."""

    def __init__(self, *, path: str, offset: int, seq: int, reason: str, torn_bytes: int) -> None:
        self.torn_bytes = torn_bytes
        super().__init__(path=path, offset=offset, seq=seq, reason=reason)

    def _describe(self) -> str:
        return (
            f"{self.path}: torn tail at byte {self.offset} (would be seq {self.seq}): {self.reason}; "
            f"{self.torn_bytes} bytes after the last valid record. Committed records before it are intact "
            "and readable. Appends are refused until the host repairs it explicitly: JsonlJournal.repair() "
            "or `waybook repair PATH`, which keeps the torn bytes in a quarantine file."
        )


class CorruptJournalError(_DamagedRecordError):
    """A record before the final one is damaged. Only an explicit prefix read is allowed."""

    def _describe(self) -> str:
        return (
            f"{self.path}: corrupt record at seq {self.seq} (byte {self.offset}): {self.reason}. Records "
            "after it cannot be trusted and appends are refused. Open with read_prefix=True to read the "
            "intact records before it, and restore the file from a copy."
        )


class NotAJournalError(IntegrityError):
    """The file's first line is not a waybook header: it is not a waybook journal (or never became one)."""

    def __init__(self, *, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        msg = (
            f"{path}: not a waybook journal (its first line is not a waybook header: {reason}). "
            "Nothing was changed; check the path (an export or another tool's file is not a journal)."
        )
        super().__init__(msg)


class SnapshotMismatchError(IntegrityError):
    """A snapshot was taken at a head this journal does not have."""


# --- capacity and storage -------------------------------------------------------------------------


class CapacityError(JournalError):
    """A configured limit would be passed. Nothing was written."""


class RecordTooLargeError(CapacityError):
    """A record's line would pass MAX_RECORD_BYTES. Store large bytes as a blob and reference them."""


class StorageError(JournalError, OSError):
    """The storage below the journal failed. The journal object may refuse further use."""


class JournalBusyError(StorageError):
    """The journal is held by a single writer (`exclusive=True`) for its lifetime, or, for an exclusive
    open, by another object right now. Nothing was written."""


class LockUnsupportedError(StorageError):
    """The filesystem cannot give an exclusive lock; waybook never falls back to a weaker one."""


class WriteFailedError(StorageError):
    """A write failed mid-append (a full disk, a file-size limit, an I/O error). Nothing was committed.

    `rolled_back` says whether the partial bytes were removed again (the journal object stays usable);
    if not, they remain as a torn tail that no reader takes for records, this journal object refuses
    further appends, and `repair()` on a reopened journal quarantines them.
    """

    def __init__(self, message: str, *, head: Head, rolled_back: bool) -> None:
        self.head = head
        self.rolled_back = rolled_back
        super().__init__(message)


class DurabilityError(StorageError):
    """An fsync failed: unlike every other error, records were written.

    The records of `result` (the append that raised; None from `flush()` or `close()`) and of earlier
    appends not yet synced are in the file: `head` (and `head()`) include them and readers see them, but
    a power loss may still take them. This journal object refuses every further append
    (JournalFailedError); reopen the journal, and read its tail to learn what survived.
    """

    def __init__(self, message: str, *, head: Head | None = None, result: AppendResult | None = None) -> None:
        self.head = head
        self.result = result
        super().__init__(message)


class JournalFailedError(StorageError):
    """An earlier write or fsync failed on this journal object, so it refuses appends. Nothing was written.

    `cause` is that earlier error. Reopen the journal (and repair a torn tail if it reports one).
    """

    def __init__(self, message: str, *, cause: StorageError) -> None:
        self.cause = cause
        super().__init__(message)


class JournalReplacedError(StorageError):
    """The journal's path no longer names the file this object holds (deleted, or replaced by another
    file). Nothing was written: appending would put records in a file nobody can find. Reopen the path
    if the new file is the journal you mean, or restore the old one.

    One exception, after two faults at once: the file was replaced while the append wrote, and cutting
    the written bytes off again failed too. Then `written` is the append whose records remain in the
    displaced file (not in the file at the path), and this journal object refuses further appends.
    """

    def __init__(self, message: str, *, written: AppendResult | None = None) -> None:
        self.written = written
        super().__init__(message)


class NotAJournalFileError(StorageError):
    """The journal path names a directory, FIFO, device or socket, not a regular file."""


class JournalClosedError(StorageError):
    """The journal was closed."""


# --- erasure (docs/erasure.md) ----------------------------------------------------------------------


class ErasureError(JournalError):
    """An erasure could not be done as asked: see the subclasses. Nothing was erased."""


class InvalidErasureError(ErasureError, ValueError):
    """An erasure request names no record, a seq the journal does not have, an unknown part, or gives no
    reason. Nothing was written or erased."""


class NotSealedError(ErasureError, ValueError):
    """A record holds content that was not sealed when it was written (a journal of schema 1, written
    before erasable content): its digest covers the content's bytes, which therefore cannot be removed.
    `waybook migrate` writes a sealed copy. Nothing was written or erased."""

    def __init__(self, message: str, *, journal: str, seq: int) -> None:
        self.journal = journal
        self.seq = seq
        super().__init__(message)


class ErasureInterruptedError(ErasureError, IntegrityError):
    """An erasure of this journal was interrupted (its marker is beside the journal): some records may be
    half overwritten until it is finished. A writer's open finishes it; from a read-only open, run
    `waybook erase --resume PATH` (or open the journal for writing)."""

    def __init__(self, message: str, *, path: str) -> None:
        self.path = path
        super().__init__(message)
