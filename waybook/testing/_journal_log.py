"""The journal as a log (docs/journal-contract.md R1-R7, R12, R13): positions, compare-and-append,
atomic batches, read order, the digest chain, fail-closed decoding, retries, canonical bytes, the head."""

from __future__ import annotations

import threading
from typing import cast

import msgspec
import pytest

from waybook.codecs import decode_record, line_digest, seal
from waybook.journal import InMemoryJournal, SessionJournal, VerifyReport, verify
from waybook.model import (
    GENESIS,
    AssistantMessage,
    BrokenBatchError,
    CustomEntry,
    DuplicateIdError,
    EmptyBatchError,
    Head,
    InvalidArgumentError,
    InvalidRecordError,
    NewRecord,
    OverlappingBatchError,
    ParentMismatchError,
    StaleWriterError,
    UnknownTagError,
)
from waybook.testing._journal_base import JournalFactory, LinesJournal, stored
from waybook.testing._records import AT, assistant, chat, reset, user


def verify_lines(lines: list[bytes]) -> VerifyReport:
    """verify() over bytes no adapter would store (verify reads nothing but `name` and `read_lines`)."""
    return verify(cast(SessionJournal, LinesJournal(lines)))


class LogContract(JournalFactory):
    # --- R1 ---------------------------------------------------------------------------------------

    def test_r1_committed_positions_are_one_based_and_gapless(self, journal: SessionJournal) -> None:
        self.started(journal, 5)
        assert [r.seq for r in journal.read()] == [1, 2, 3, 4, 5, 6]

    def test_r1_racing_threads_win_each_position_exactly_once(self, journal: SessionJournal) -> None:
        self.started(journal)
        threads, attempts = 8, 500
        wins: list[list[int]] = [[] for _ in range(threads)]
        barrier = threading.Barrier(threads)

        def writer(w: int) -> None:
            barrier.wait()
            for i in range(attempts):
                head = journal.head()
                try:  # resets are valid anywhere, so every writer may append after any head
                    result = journal.append([reset(f"t{w}-{i}")], expected=head)
                except StaleWriterError:
                    continue
                wins[w].append(result.head.seq)

        pool = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        won = sorted(seq for w in wins for seq in w)
        assert won == list(range(2, journal.head().seq + 1)), "every position has exactly one winner"
        assert len(won) >= attempts, "contention must not starve every writer"
        assert verify(journal).ok

    # --- R2 ---------------------------------------------------------------------------------------

    def test_r2_stale_writer_is_refused_before_any_byte_is_written(self, journal: SessionJournal) -> None:
        stale = self.started(journal)
        current = journal.append([user("u1", None)], expected=stale).head
        before = stored(journal)
        with pytest.raises(StaleWriterError) as caught:
            journal.append([user("u2", None)], expected=stale)
        assert caught.value.expected == stale
        assert caught.value.actual == current
        assert stored(journal) == before
        assert journal.head() == current

    def test_r2_a_head_with_the_right_seq_but_another_digest_is_stale(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        forged = Head(head.seq, "f" * 64)
        with pytest.raises(StaleWriterError):
            journal.append([user("u1", None)], expected=forged)
        assert journal.head() == head

    # --- R3 ---------------------------------------------------------------------------------------

    def test_r3_a_batch_with_one_invalid_record_commits_nothing(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        batch = [user("a", None), assistant("b", "a"), user("c", "wrong-parent")]
        with pytest.raises(ParentMismatchError):
            journal.append(batch, expected=head)
        assert journal.head() == head
        assert [r.id for r in journal.read()] == ["h"]

    def test_r3_a_batch_commits_at_consecutive_positions(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        result = journal.append(list(chat(4)), expected=head)
        assert [r.seq for r in result.records] == [2, 3, 4, 5]
        assert result.prior == head
        assert result.head == Head(5, result.records[-1].digest)

    def test_r3_an_empty_batch_is_refused(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        with pytest.raises(EmptyBatchError):
            journal.append([], expected=head)

    def test_r3_records_of_a_batch_carry_their_place_in_the_stored_bytes(
        self, journal: SessionJournal
    ) -> None:
        head = self.started(journal)
        head = journal.append(list(chat(3)), expected=head).head
        journal.append([user("alone", "m2")], expected=head)
        lines = list(journal.read_lines())
        places = [decode_record(line).batch for line in lines]
        assert places == [None, (1, 3), (2, 3), (3, 3), None]
        assert all(line_digest(line) for line in lines), "the digest covers the place"
        assert InMemoryJournal.from_lines(lines).head() == journal.head()
        with pytest.raises(BrokenBatchError):
            InMemoryJournal.from_lines(lines[:3])  # a batch cut short is never taken for records

    # --- R4 ---------------------------------------------------------------------------------------

    def test_r4_read_order_is_commit_order_with_after_and_limit(self, journal: SessionJournal) -> None:
        self.started(journal, 9)
        assert [r.seq for r in journal.read()] == list(range(1, 11))
        assert [r.seq for r in journal.read(after=4)] == [5, 6, 7, 8, 9, 10]
        assert [r.seq for r in journal.read(after=4, limit=3)] == [5, 6, 7]
        assert [r.seq for r in journal.read(after=10)] == []
        assert [r.seq for r in journal.read(limit=0)] == []

    def test_r4_read_lines_are_the_stored_bytes_of_the_same_records(self, journal: SessionJournal) -> None:
        self.started(journal, 3)
        lines = list(journal.read_lines(after=1, limit=2))
        records = list(journal.read(after=1, limit=2))
        assert [decode_record(line) for line in lines] == records

    def test_r4_a_cursor_continues_where_the_reader_stopped(self, journal: SessionJournal) -> None:
        head = self.started(journal, 2)
        seen = [r.seq for r in journal.read()]
        journal.append([user("x", None)], expected=journal.append([reset("z")], expected=head).head)
        seen += [r.seq for r in journal.read(after=seen[-1])]
        assert seen == [1, 2, 3, 4, 5]

    @pytest.mark.parametrize("after", ["1", 1.5, None])
    def test_a_read_cursor_of_the_wrong_kind_is_refused_typed(
        self, journal: SessionJournal, after: object
    ) -> None:
        with pytest.raises(InvalidArgumentError):
            list(journal.read(after=after))  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError):
            list(journal.read_lines(after=after))  # type: ignore[arg-type]

    # --- R5 ---------------------------------------------------------------------------------------

    def test_r5_each_prev_is_the_digest_before_and_each_digest_covers_the_bytes(
        self, journal: SessionJournal
    ) -> None:
        self.started(journal, 4)
        prev = GENESIS.digest
        for record, line in zip(journal.read(), journal.read_lines(), strict=True):
            assert record.prev == prev
            assert line_digest(line) == record.digest
            prev = record.digest
        assert verify(journal).ok

    def test_r5_verify_reports_the_first_bad_seq(self, journal: SessionJournal) -> None:
        self.started(journal, 4)
        lines = stored(journal)
        lines[2] = lines[2].replace(b"answer", b"ANSWER")
        report = verify_lines(lines)
        assert not report.ok
        assert report.bad_seq == 3
        assert report.records == 2
        assert "digest" in (report.reason or "")

    def test_r5_verify_names_the_first_record_that_breaks_a_session_rule(
        self, journal: SessionJournal
    ) -> None:
        self.started(journal, 6)
        lines = stored(journal)[:4]
        prev = list(journal.read())[3].digest
        _, rogue = seal(5, user("rogue", None), prev)  # well chained, but not a child of the leaf
        report = verify_lines([*lines, rogue])
        assert not report.ok
        assert report.bad_seq == 5
        assert report.records == 4
        assert "leaf" in (report.reason or "")

    # --- R6 ---------------------------------------------------------------------------------------

    def test_r6_an_unknown_tag_fails_closed(self, journal: SessionJournal) -> None:
        self.started(journal, 1)
        line = next(journal.read_lines(after=1))
        with pytest.raises(UnknownTagError) as caught:
            decode_record(line.replace(b"waybook.user/2", b"waybook.user/9"), where="line 2")
        assert caught.value.where == "line 2"
        assert caught.value.field == "$.body.kind"

    # --- R7 ---------------------------------------------------------------------------------------

    def test_r7_resending_a_committed_batch_returns_the_original_result(
        self, journal: SessionJournal
    ) -> None:
        head = self.started(journal)
        batch = list(chat(3))
        first = journal.append(batch, expected=head)
        before = stored(journal)
        again = journal.append(batch, expected=head)
        assert again == first
        assert stored(journal) == before

    def test_r7_a_retry_is_recognised_after_other_writers_moved_on(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        batch = [user("a", None)]
        first = journal.append(batch, expected=head)
        journal.append([assistant("b", "a")], expected=first.head)
        assert journal.append(batch, expected=head) == first

    def test_r7_a_batch_partially_overlapping_committed_ids_is_refused(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        committed = journal.append([user("a", None), assistant("b", "a")], expected=head)
        with pytest.raises(OverlappingBatchError) as caught:
            journal.append([user("a", None), user("new", "a")], expected=head)
        assert caught.value.ids == ("a",)
        with pytest.raises(DuplicateIdError):
            journal.append([assistant("b", "b")], expected=committed.head)
        assert journal.head() == committed.head

    def test_r7_same_ids_with_another_body_is_not_a_retry(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        journal.append([user("a", None, "one")], expected=head)
        with pytest.raises(OverlappingBatchError):
            journal.append([user("a", None, "two")], expected=head)

    def test_r7_a_retry_of_part_of_a_committed_batch_is_not_taken_for_the_batch(
        self, journal: SessionJournal
    ) -> None:
        head = journal.append([self.header()], expected=GENESIS).head
        first, second = user("p1", None, "a"), user("p2", "p1", "b")
        whole = journal.append([first, second], expected=head)
        assert journal.append([first, second], expected=head) == whole  # the exact retry
        with pytest.raises(OverlappingBatchError):
            journal.append([first], expected=head)  # its first record alone is not that batch
        assert journal.head() == whole.head

    # --- R12 --------------------------------------------------------------------------------------

    def test_r12_the_committed_record_equals_what_replay_reads(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        data = {"z": 1, "a": [1.5, None], "pair": (1, 2)}
        body = CustomEntry(parent=None, type="test.note", data=data)
        result = journal.append([NewRecord(id="c", at=AT, body=body)], expected=head)
        replayed = list(journal.read(after=1))
        assert list(result.records) == replayed
        assert replayed[0].body.data == {"a": [1.5, None], "pair": [1, 2], "z": 1}  # type: ignore[union-attr]

    def test_r12_a_body_that_is_not_json_is_refused_before_writing(self, journal: SessionJournal) -> None:
        head = self.started(journal)
        body = CustomEntry(parent=None, type="test.note", data={"when": object()})
        with pytest.raises(InvalidRecordError):
            journal.append([NewRecord(id="c", at=AT, body=body)], expected=head)
        wrong = AssistantMessage(parent=None, content="not blocks", stop_reason="end_turn")  # type: ignore[arg-type]
        with pytest.raises(InvalidRecordError):
            journal.append([NewRecord(id="c", at=AT, body=wrong)], expected=head)
        assert journal.head() == head

    @pytest.mark.parametrize(
        ("field", "value"),
        [
            ("id", ""),
            ("id", "../x"),
            ("id", "a" * 129),
            ("id", "u\n"),
            ("at", "yesterday"),
            ("at", "2026-12-01T09:00:00+01:00"),
            ("at", "2026-12-01T09:00:00Z\n"),
            ("at", "\u0662\u0660\u0662\u0666-12-01T09:00:00Z"),  # Arabic-Indic digits are digits, not ASCII
        ],
    )
    def test_r12_ids_and_timestamps_have_one_wire_form(
        self, journal: SessionJournal, field: str, value: str
    ) -> None:
        head = self.started(journal)
        bad = msgspec.structs.replace(user("u", None), **{field: value})
        with pytest.raises(InvalidRecordError):
            journal.append([bad], expected=head)
        assert journal.head() == head

    # --- R13 --------------------------------------------------------------------------------------

    def test_r13_the_head_names_the_last_record(self, journal: SessionJournal) -> None:
        assert journal.head() == GENESIS
        self.started(journal, 2)
        last = list(journal.read())[-1]
        assert journal.head() == Head(last.seq, last.digest)

    def test_r13_an_append_result_carries_the_heads_before_and_after_it(
        self, journal: SessionJournal
    ) -> None:
        head = self.started(journal)
        result = journal.append(list(chat(2)), expected=head)
        assert result.prior == head
        assert result.head == journal.head() == Head(3, result.records[-1].digest)
