"""Issue 12: a fault-injection file layer drives a hypothesis state machine against the JSONL journal.

Faults: short writes; ENOSPC, EFBIG and EIO on write (after some bytes went in); EIO on fsync and on the
truncate that undoes a failed write; the journal file replaced by a copy, or removed, before any system
call of an append or an open. After every step a plain reader must see exactly the model's records: no
acknowledged record lost, no part of a batch, and every failure was one of the typed errors below.

Issue 46: the journal is sealed (schema 2) or not, and an erase rule takes the content of some records;
the model marks them erased. After every step every other record reads as written, every digest is the
one its append returned, and the journal verifies (an unsealed journal refuses to erase: NotSealedError).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.helpers.builders import AT, header
from tests.helpers.faults import Fault, FaultyFileOps
from waybook.journal import ErasureReceipt, JsonlJournal, erase, verify
from waybook.journal._durability import Durability
from waybook.model import (
    GENESIS,
    SEALED_SCHEMA,
    AppendResult,
    DurabilityError,
    Header,
    JournalError,
    JournalFailedError,
    JournalReplacedError,
    NewRecord,
    NotSealedError,
    StorageError,
    UserMessage,
    WriteFailedError,
    plain_text,
    text,
)

T = TypeVar("T")

WRITE_FAULTS = st.builds(
    Fault,
    op=st.just("write"),
    effect=st.sampled_from(["ENOSPC", "EFBIG", "EIO", "short"]),
    nth=st.integers(0, 2),
    cut=st.integers(0, 600),
)
FSYNC_FAULTS = st.builds(Fault, op=st.just("fsync"), effect=st.just("EIO"), nth=st.integers(0, 1))
UNDO_FAULTS = st.builds(Fault, op=st.just("truncate"), effect=st.just("EIO"))
PATH_FAULTS = st.builds(
    Fault, op=st.just("any"), effect=st.sampled_from(["replace", "remove"]), nth=st.integers(0, 14)
)
APPEND_FAULTS = st.lists(st.one_of(WRITE_FAULTS, FSYNC_FAULTS, UNDO_FAULTS, PATH_FAULTS), max_size=2)


def attempt(action: Callable[[], T]) -> T | JournalError:
    """What `action` returned, or the journal error it raised; anything else propagates (untyped)."""
    try:
        return action()
    except JournalError as exc:
        return exc


class JsonlFaultMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="waybook-faults-"))
        self.path = self.dir / "j.jsonl"
        self.ops = FaultyFileOps(self.path)
        self.durability = Durability.FLUSH
        self.ids: list[str] = []  # the model: ids of committed records, in order
        self.head = GENESIS
        self.journal: JsonlJournal | None = None
        self.failed = False  # this journal object met a failure after which it may refuse appends
        self.must_refuse = False  # ... after which it must
        self.counter = 0
        self.sealed = False
        self.texts: dict[str, str] = {}  # the model: each message's text, by id
        self.erased: set[str] = set()  # ... the ids whose content was erased
        self.digests: dict[str, str] = {}  # ... the digest each append returned

    @initialize(durability=st.sampled_from(list(Durability)), sealed=st.booleans())
    def start(self, durability: Durability, sealed: bool) -> None:
        self.durability = durability
        self.sealed = sealed
        schema = SEALED_SCHEMA if sealed else 1
        first = NewRecord(id="h", at=AT, body=Header(journal="test", creator="tests", schema=schema))
        with JsonlJournal(self.path) as journal:
            self._commit(journal.append([first], expected=GENESIS))
        self.journal = self._open()

    def _open(self) -> JsonlJournal:
        return JsonlJournal(
            self.path,
            create=False,
            durability=self.durability,
            on_torn_tail="repair",
            file_ops=self.ops,
        )

    def _commit(self, result: AppendResult) -> None:
        assert result.prior == self.head
        self.ids.extend(r.id for r in result.records)
        self.digests.update((r.id, r.digest) for r in result.records)
        self.texts.update(
            (r.id, plain_text(r.body.content)) for r in result.records if isinstance(r.body, UserMessage)
        )
        self.head = result.head

    def teardown(self) -> None:
        if self.journal is not None:
            with contextlib.suppress(JournalError):
                self.journal.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- rules ------------------------------------------------------------------------------------

    @rule(size=st.integers(1, 6), faults=APPEND_FAULTS)
    def append(self, size: int, faults: list[Fault]) -> None:
        assert self.journal is not None
        batch = []
        parent = next(reversed(self.texts), None)  # the last message (an erasure is not a node)
        for _ in range(size):
            self.counter += 1
            rid = f"n{self.counter}"
            body = UserMessage(parent=parent, content=text(f"record {rid} " + "x" * 60))
            batch.append(NewRecord(id=rid, at=AT, body=body))
            parent = rid
        self.ops.arm(*faults)
        try:
            outcome = attempt(lambda: self.journal.append(batch, expected=self.head))  # type: ignore[union-attr]
        finally:
            self.ops.disarm()
            self.ops.restore()
        event(type(outcome).__name__)
        if isinstance(outcome, AppendResult):
            assert not self.must_refuse, "an object whose write or fsync failed must refuse appends"
            self._commit(outcome)
        elif isinstance(outcome, WriteFailedError):
            assert outcome.head == self.head, "a failed write commits nothing"
            self.failed = True
            self.must_refuse |= not outcome.rolled_back
        elif isinstance(outcome, DurabilityError):
            assert outcome.result is not None, "the error names the records that were written"
            assert [r.id for r in outcome.result.records] == [n.id for n in batch]
            assert outcome.head == outcome.result.head
            self._commit(outcome.result)  # in the file and visible, though not known durable
            self.failed = self.must_refuse = True
        elif isinstance(outcome, JournalReplacedError):
            self.failed = True
            if outcome.written is not None:  # replaced mid-write and the undo failed: the error says so
                assert [r.id for r in outcome.written.records] == [n.id for n in batch]
                self._commit(outcome.written)  # in the displaced file, which restore() put back
                self.must_refuse = True
        else:
            assert isinstance(outcome, JournalFailedError), f"untyped or unexpected: {outcome!r}"
            assert self.failed, "an object refuses appends only after a failure"

    @rule(picks=st.lists(st.integers(0, 1000), min_size=1, max_size=3))
    def erase_records(self, picks: list[int]) -> None:
        assert self.journal is not None
        if self.failed or len(self.ids) < 2:
            return
        seqs = sorted({2 + p % (len(self.ids) - 1) for p in picks})  # any record after the header
        outcome = attempt(lambda: erase(self.journal, seqs, reason="asked"))  # type: ignore[arg-type]
        event(f"erase: {type(outcome).__name__}")
        if isinstance(outcome, JournalReplacedError):  # an earlier fault left the path naming a copy
            self.failed = True
            return
        if not self.sealed:
            assert isinstance(outcome, NotSealedError), f"untyped or unexpected: {outcome!r}"
            return
        assert isinstance(outcome, ErasureReceipt), f"untyped or unexpected: {outcome!r}"
        taken = [s for s in seqs if self.ids[s - 1] in self.texts and self.ids[s - 1] not in self.erased]
        assert [e.seq for e in outcome.erased] == taken
        assert [e.digest for e in outcome.erased] == [self.digests[self.ids[s - 1]] for s in taken]
        self.erased.update(self.ids[s - 1] for s in taken)
        added = list(self.journal.read(after=self.head.seq))  # the erasure records, appended first
        assert [r.seq for r in added] == [h.seq for h in outcome.erasures]
        self.ids.extend(r.id for r in added)
        self.digests.update((r.id, r.digest) for r in added)
        self.head = self.journal.head()

    @rule(fail=st.booleans())
    def flush(self, fail: bool) -> None:
        assert self.journal is not None
        self.ops.arm(*([Fault("fsync", "EIO")] if fail else []))
        try:
            outcome = attempt(self.journal.flush)
        finally:
            self.ops.disarm()
        if isinstance(outcome, DurabilityError):
            assert outcome.result is None
            assert outcome.head == self.head
            self.failed = self.must_refuse = True
        elif outcome is not None:
            assert isinstance(outcome, JournalFailedError), f"untyped or unexpected: {outcome!r}"
            assert self.failed

    @rule(faults=st.lists(PATH_FAULTS, max_size=1))
    def reopen(self, faults: list[Fault]) -> None:
        assert self.journal is not None
        with contextlib.suppress(JournalError):
            self.journal.close()
        self.ops.arm(*faults)
        try:
            opened = attempt(self._open)
        finally:
            self.ops.disarm()
            self.ops.restore()
        if not isinstance(opened, JsonlJournal):  # the file was removed before the open could see it
            assert isinstance(opened, StorageError), f"untyped: {opened!r}"
            opened = self._open()
        self.journal = opened
        self.failed = self.must_refuse = False
        assert self.journal.head() == self.head, "reopening (and repairing) keeps every committed record"

    # --- what must always hold -----------------------------------------------------------------------

    @invariant()
    def a_reader_sees_exactly_the_committed_records(self) -> None:
        if not self.ids:
            return
        with JsonlJournal(self.path, create=False, readonly=True) as reader:
            damage = reader.damage
            assert damage is None or damage.torn, "faults only ever leave a torn tail, never corruption"
            records = list(reader.read())
            assert [r.id for r in records] == self.ids
            assert reader.head() == self.head
            assert [r.digest for r in records] == [self.digests[i] for i in self.ids], "no digest moves"
            for record in records:
                if record.id in self.erased:
                    assert record.erased is not None
                    assert record.body.content == ()  # type: ignore[union-attr]
                elif record.id in self.texts:
                    assert record.erased is None
                    assert plain_text(record.body.content) == self.texts[record.id]  # type: ignore[union-attr]
            if self.erased:
                assert verify(reader).ok

    @invariant()
    def the_live_object_is_consistent(self) -> None:
        if self.journal is not None and not self.failed:
            self.journal.check_invariants()


JsonlFaultMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_the_jsonl_journal_under_injected_faults = JsonlFaultMachine.TestCase


# --- the races the machine found worth a name -----------------------------------------------------


def test_a_file_renamed_over_the_path_during_the_write_gets_nothing_and_the_writer_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    ops = FaultyFileOps(path)
    with JsonlJournal(path, file_ops=ops) as journal:
        head = journal.append([header()], expected=GENESIS).head
        before = path.read_bytes()
        ops.arm(Fault("write", "replace"), Fault("any", "replace", nth=3))  # after the identity check
        new = NewRecord(id="u", at=AT, body=UserMessage(parent=None, content=text("lost?")))
        try:
            journal.append([new], expected=head)
        except JournalReplacedError:
            pass
        else:
            raise AssertionError("an append into a replaced file was acknowledged")
        assert ops.aside.read_bytes() == before, "the bytes written to the displaced file were cut off"
        assert path.read_bytes() == before, "the file now at the path was not touched"


def test_a_journal_replaced_again_while_its_bytes_are_cut_off_keeps_nothing_unacknowledged(
    tmp_path: Path,
) -> None:
    # Found by the machine (issue 29): the path replaced at the path check (calls: size, write,
    # identity), then again at the cut's size call. The journal's own file is cut back; the copies
    # renamed over the path are somebody else's files, set aside by the fault layer (never destroyed).
    path = tmp_path / "j.jsonl"
    ops = FaultyFileOps(path)
    with JsonlJournal(path, durability=Durability.NONE, sidecar=False, file_ops=ops) as journal:
        head = journal.append([header()], expected=GENESIS).head
        before = path.read_bytes()
        ops.arm(Fault("any", "replace", nth=2), Fault("any", "replace", nth=3))
        new = NewRecord(id="u", at=AT, body=UserMessage(parent=None, content=text("lost?")))
        with pytest.raises(JournalReplacedError) as refused:  # never acknowledged into a copy
            journal.append([new], expected=head)
        assert refused.value.written is None, "the bytes were cut off the journal's own file"
        ops.disarm()
        assert ops.aside.read_bytes() == before, "the journal's own file holds only what was acknowledged"
        assert ops.restore()
        assert journal.head() == head
        assert journal.append([new], expected=head).head.seq == 2  # the journal is back at its path


def test_a_file_replaced_mid_write_whose_undo_fails_names_the_records_left_in_the_displaced_file(
    tmp_path: Path,
) -> None:
    # Found by the machine (issue 15, 2ca54f0): the path replaced at the write, then EIO on the
    # truncate that would cut the written bytes off again. The records stay in the displaced file: the
    # error names them, the object refuses further appends, and the file put back holds them.
    path = tmp_path / "j.jsonl"
    ops = FaultyFileOps(path)
    with JsonlJournal(path, file_ops=ops) as journal:
        first = header()
        head = journal.append([first], expected=GENESIS).head
        ops.arm(Fault("write", "replace"), Fault("truncate", "EIO"))
        new = NewRecord(id="u", at=AT, body=UserMessage(parent=None, content=text("kept")))
        with pytest.raises(JournalReplacedError) as refused:
            journal.append([new], expected=head)
        ops.disarm()
        written = refused.value.written
        assert written is not None, "the error says the records are in the displaced file"
        assert [r.id for r in written.records] == ["u"]
        with pytest.raises(JournalFailedError):
            journal.append([new], expected=written.head)
        assert ops.restore()
    with JsonlJournal(path, create=False, readonly=True) as reader:
        assert [r.id for r in reader.read()] == [first.id, "u"]
