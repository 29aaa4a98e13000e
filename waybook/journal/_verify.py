"""`verify()`: walk any journal's committed bytes and report the first record that breaks the history."""

from __future__ import annotations

from itertools import islice

import attrs

from waybook.journal._batches import CLOSED, cut_batch_reason, whole_batches
from waybook.journal._erasure import erasure_finding, logged_erasure_finding
from waybook.journal._ledger import Ledger, prove_lines
from waybook.journal._protocol import SessionJournal
from waybook.model import GENESIS, BrokenBatchError, Head, InvalidArgumentError, JournalError


@attrs.frozen
class VerifyReport:
    """The outcome of a chain walk. `head` is the last record that verified."""

    journal: str
    ok: bool
    records: int
    head: Head
    bad_seq: int | None = None
    reason: str | None = None
    offset: int | None = None
    torn_tail: bool = False
    """The damage is a torn final record, which `repair` can quarantine; else it is corruption."""
    pending_erasures: tuple[int, ...] = ()
    """Records that an erasure record names but that still hold their content: the erasure was
    interrupted before it removed them (`waybook erase --resume` finishes it; docs/erasure.md)."""

    def __str__(self) -> str:
        if self.ok:
            records = "1 record" if self.records == 1 else f"{self.records} records"
            pending = ""
            if self.pending_erasures:
                seqs = ", ".join(map(str, self.pending_erasures[:10]))
                more = ", ..." if len(self.pending_erasures) > 10 else ""
                pending = (
                    f"; erasure pending: records {seqs}{more} still hold content an erasure took "
                    "(run `waybook erase --resume`)"
                )
            return f"{self.journal}: ok, {records}, head {self.head}{pending}"
        where = f" (byte {self.offset})" if self.offset is not None else ""
        return f"{self.journal}: FAILED at seq {self.bad_seq}{where}: {self.reason}"


def verify(journal: SessionJournal) -> VerifyReport:
    """Prove `journal`'s digest chain, batches and session rules from seq 1, and its erasures: every erased
    record named by its erasure record, every erasure's records erased or reported pending
    (docs/erasure.md). Never raises for bad data.

    Reads the stored canonical bytes, so the check covers exactly what a later reader will see. Lines
    are proven and rule-checked in chunks; a chunk that breaks a rule is rechecked record by record to
    name the first bad seq. A multi-record batch must be whole (waybook.journal._batches). Something
    that is not a journal (a path, a store) is refused with InvalidArgumentError.
    """
    if not callable(getattr(journal, "read_lines", None)) or not isinstance(
        getattr(journal, "name", None), str
    ):
        kind = type(journal).__name__
        hint = (
            " (open it first: waybook.journal.verify_file(path) proves a file)"
            if isinstance(journal, str)
            else ""
        )
        msg = f"verify takes a journal (JsonlJournal, InMemoryJournal, store.open(id)), not {kind}{hint}"
        raise InvalidArgumentError(msg)
    name = journal.name
    ledger = Ledger.empty(name)
    ledger.erasure_log = []
    lines = journal.read_lines()
    state = CLOSED
    boundary = GENESIS  # the head after the last whole batch
    while chunk := list(islice(lines, 4096)):
        records, error = prove_lines(chunk, ledger.head, name)
        try:
            ledger.advance(records)
        except JournalError:
            for record in records:
                if record.seq <= ledger.head.seq:  # taken before the rule broke (the header)
                    continue
                try:
                    ledger.advance((record,))
                except JournalError as exc:
                    return _failed(name, ledger.head, exc)
        try:
            whole, state = whole_batches(records, state, name)
        except BrokenBatchError as exc:
            first = records[0].seq
            head = Head.of(records[exc.seq - 1 - first]) if exc.seq > first else boundary
            return _failed(name, head, exc)
        if whole:
            boundary = Head.of(records[whole - 1])
        if error is not None:
            return _failed(name, ledger.head, error)
    if state != CLOSED:
        cut = BrokenBatchError(
            journal=name, seq=boundary.seq + 1, reason=cut_batch_reason(boundary.seq + 1, state)
        )
        return _failed(name, boundary, cut)
    return erasure_report(journal, ledger, name)


def erasure_report(journal: SessionJournal, ledger: Ledger, name: str) -> VerifyReport:
    """The report of a journal whose chain `ledger` has proved: ok, unless its erasures (which only a
    journal with an erasure or an erased record has) are not all explained (docs/erasure.md). They are
    proved from the ledger's `erasure_log` when it holds one; the journal is read again only without
    a log, or when an erasure names a record still holding its content (pending) or none at all."""
    if not ledger.erasures:
        return VerifyReport(name, ok=True, records=ledger.head.seq, head=ledger.head)
    log = ledger.erasure_log
    finding = logged_erasure_finding(log) if log is not None else None
    if finding is None:
        finding = erasure_finding(journal.read_lines(limit=ledger.head.seq))
    if finding.damage is not None:
        assert finding.damage_seq is not None
        return VerifyReport(
            name,
            ok=False,
            records=ledger.head.seq,
            head=ledger.head,
            bad_seq=finding.damage_seq,
            reason=f"erasure: {finding.damage}",
        )
    return VerifyReport(
        name, ok=True, records=ledger.head.seq, head=ledger.head, pending_erasures=finding.pending
    )


def _failed(name: str, head: Head, exc: JournalError) -> VerifyReport:
    reason = getattr(exc, "reason", None) or str(exc)
    return VerifyReport(name, ok=False, records=head.seq, head=head, bad_seq=head.seq + 1, reason=reason)
