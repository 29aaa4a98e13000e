"""The journal contract (docs/journal-contract.md), one test per numbered requirement and rule.

Every adapter in conftest.ADAPTERS runs every test here unchanged.
"""

from __future__ import annotations

import threading

import msgspec
import pytest

from tests.builders import AT, assistant, chat, header, move, reset, user
from waybook.codecs import decode_record, line_digest
from waybook.journal import (
    GENESIS,
    AssistantMessage,
    BrokenBatchError,
    DuplicateIdError,
    EmptyBatchError,
    Head,
    InMemoryJournal,
    InvalidLeafMoveError,
    InvalidRecordError,
    MisplacedHeaderError,
    NewRecord,
    OverlappingBatchError,
    ParentMismatchError,
    PartialAssistantError,
    SessionJournal,
    StaleWriterError,
    UnknownNodeError,
    UnknownTagError,
    verify,
)
from waybook.model._records import Compaction, ContextExclusion, CustomEntry


def started(journal: SessionJournal, n: int = 0) -> Head:
    """Write a header and n chat nodes; return the head."""
    head = journal.append([header()], expected=GENESIS).head
    if n:
        head = journal.append(list(chat(n)), expected=head).head
    return head


def stored(journal: SessionJournal) -> list[bytes]:
    return list(journal.read_lines())


# --- R1 -------------------------------------------------------------------------------------------


def test_r1_committed_positions_are_one_based_and_gapless(journal: SessionJournal) -> None:
    started(journal, 5)
    assert [r.seq for r in journal.read()] == [1, 2, 3, 4, 5, 6]


def test_r1_racing_threads_win_each_position_exactly_once(journal: SessionJournal) -> None:
    started(journal)
    threads, attempts = 8, 500
    wins: list[list[int]] = [[] for _ in range(threads)]
    barrier = threading.Barrier(threads)

    def writer(w: int) -> None:
        barrier.wait()
        for i in range(attempts):
            head = journal.head()
            # Every thread moves the leaf to None and back is not needed: resets are valid anywhere.
            try:
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


# --- R2 -------------------------------------------------------------------------------------------


def test_r2_stale_writer_is_refused_before_any_byte_is_written(journal: SessionJournal) -> None:
    stale = started(journal)
    current = journal.append([user("u1", None)], expected=stale).head
    before = stored(journal)
    with pytest.raises(StaleWriterError) as caught:
        journal.append([user("u2", None)], expected=stale)
    assert caught.value.expected == stale
    assert caught.value.actual == current
    assert stored(journal) == before
    assert journal.head() == current


def test_r2_a_head_with_the_right_seq_but_another_digest_is_stale(journal: SessionJournal) -> None:
    head = started(journal)
    forged = Head(head.seq, "f" * 64)
    with pytest.raises(StaleWriterError):
        journal.append([user("u1", None)], expected=forged)
    assert journal.head() == head


# --- R3 -------------------------------------------------------------------------------------------


def test_r3_a_batch_with_one_invalid_record_commits_nothing(journal: SessionJournal) -> None:
    head = started(journal)
    batch = [user("a", None), assistant("b", "a"), user("c", "wrong-parent")]
    with pytest.raises(ParentMismatchError):
        journal.append(batch, expected=head)
    assert journal.head() == head
    assert [r.id for r in journal.read()] == ["h"]


def test_r3_a_batch_commits_at_consecutive_positions(journal: SessionJournal) -> None:
    head = started(journal)
    result = journal.append(list(chat(4)), expected=head)
    assert [r.seq for r in result.records] == [2, 3, 4, 5]
    assert result.prior == head
    assert result.head == Head(5, result.records[-1].digest)


def test_r3_an_empty_batch_is_refused(journal: SessionJournal) -> None:
    head = started(journal)
    with pytest.raises(EmptyBatchError):
        journal.append([], expected=head)


def test_r3_records_of_a_batch_carry_their_place_in_the_stored_bytes(journal: SessionJournal) -> None:
    head = started(journal)
    head = journal.append(list(chat(3)), expected=head).head
    journal.append([user("alone", "m2")], expected=head)
    lines = list(journal.read_lines())
    places = [decode_record(line).batch for line in lines]
    assert places == [None, (1, 3), (2, 3), (3, 3), None]
    assert all(line_digest(line) for line in lines), "the digest covers the place"
    assert InMemoryJournal.from_lines(lines).head() == journal.head()
    with pytest.raises(BrokenBatchError):
        InMemoryJournal.from_lines(lines[:3])  # a batch cut short is never taken for records


# --- R4 -------------------------------------------------------------------------------------------


def test_r4_read_order_is_commit_order_with_after_and_limit(journal: SessionJournal) -> None:
    started(journal, 9)
    assert [r.seq for r in journal.read()] == list(range(1, 11))
    assert [r.seq for r in journal.read(after=4)] == [5, 6, 7, 8, 9, 10]
    assert [r.seq for r in journal.read(after=4, limit=3)] == [5, 6, 7]
    assert [r.seq for r in journal.read(after=10)] == []
    assert [r.seq for r in journal.read(limit=0)] == []


def test_r4_read_lines_are_the_stored_bytes_of_the_same_records(journal: SessionJournal) -> None:
    started(journal, 3)
    lines = list(journal.read_lines(after=1, limit=2))
    records = list(journal.read(after=1, limit=2))
    assert [decode_record(line) for line in lines] == records


def test_r4_a_cursor_continues_where_the_reader_stopped(journal: SessionJournal) -> None:
    head = started(journal, 2)
    seen = [r.seq for r in journal.read()]
    journal.append([user("x", None)], expected=journal.append([reset("z")], expected=head).head)
    seen += [r.seq for r in journal.read(after=seen[-1])]
    assert seen == [1, 2, 3, 4, 5]


# --- R5 -------------------------------------------------------------------------------------------


def test_r5_each_prev_is_the_digest_before_and_each_digest_covers_the_bytes(journal: SessionJournal) -> None:
    started(journal, 4)
    prev = GENESIS.digest
    for record, line in zip(journal.read(), journal.read_lines(), strict=True):
        assert record.prev == prev
        assert line_digest(line) == record.digest
        prev = record.digest
    assert verify(journal).ok


def test_r5_verify_reports_the_first_bad_seq() -> None:
    from waybook.journal import InMemoryJournal

    source = InMemoryJournal()
    started(source, 4)
    lines = list(source.read_lines())
    lines[2] = lines[2].replace(b"answer", b"ANSWER")
    damaged = _ListJournal(lines)
    report = verify(damaged)
    assert not report.ok
    assert report.bad_seq == 3
    assert report.records == 2
    assert "digest" in (report.reason or "")


# --- R6 -------------------------------------------------------------------------------------------


def test_r6_an_unknown_tag_fails_closed() -> None:
    from waybook.journal import InMemoryJournal

    source = InMemoryJournal()
    started(source, 1)
    line = next(source.read_lines(after=1))
    with pytest.raises(UnknownTagError) as caught:
        decode_record(line.replace(b"waybook.user/2", b"waybook.user/9"), where="line 2")
    assert caught.value.where == "line 2"
    assert caught.value.field == "$.body.kind"


# --- R7 -------------------------------------------------------------------------------------------


def test_r7_resending_a_committed_batch_returns_the_original_result(journal: SessionJournal) -> None:
    head = started(journal)
    batch = list(chat(3))
    first = journal.append(batch, expected=head)
    before = stored(journal)
    again = journal.append(batch, expected=head)
    assert again == first
    assert stored(journal) == before


def test_r7_a_retry_is_recognised_after_other_writers_moved_on(journal: SessionJournal) -> None:
    head = started(journal)
    batch = [user("a", None)]
    first = journal.append(batch, expected=head)
    journal.append([assistant("b", "a")], expected=first.head)
    assert journal.append(batch, expected=head) == first


def test_r7_a_batch_partially_overlapping_committed_ids_is_refused(journal: SessionJournal) -> None:
    head = started(journal)
    committed = journal.append([user("a", None), assistant("b", "a")], expected=head)
    with pytest.raises(OverlappingBatchError) as caught:
        journal.append([user("a", None), user("new", "a")], expected=head)
    assert caught.value.ids == ("a",)
    with pytest.raises(DuplicateIdError):
        journal.append([assistant("b", "b")], expected=committed.head)
    assert journal.head() == committed.head


def test_r7_same_ids_with_another_body_is_not_a_retry(journal: SessionJournal) -> None:
    head = started(journal)
    journal.append([user("a", None, "one")], expected=head)
    with pytest.raises(OverlappingBatchError):
        journal.append([user("a", None, "two")], expected=head)


# --- R8 -------------------------------------------------------------------------------------------


def test_r8_ids_are_unique_within_a_journal(journal: SessionJournal) -> None:
    head = started(journal, 1)
    with pytest.raises(DuplicateIdError):
        journal.append([assistant("m0", "m0")], expected=head)
    with pytest.raises(DuplicateIdError):
        journal.append([assistant("x", "m0"), user("x", "x")], expected=head)
    assert journal.head() == head


def test_r8_the_header_is_first(journal: SessionJournal) -> None:
    with pytest.raises(MisplacedHeaderError):
        journal.append([user("u", None)], expected=GENESIS)
    assert journal.head() == GENESIS


def test_r8_the_header_is_only_first(journal: SessionJournal) -> None:
    head = started(journal)
    with pytest.raises(MisplacedHeaderError):
        journal.append([header("h2")], expected=head)


# --- R9 -------------------------------------------------------------------------------------------


def test_r9_a_node_must_extend_the_current_leaf(journal: SessionJournal) -> None:
    head = started(journal, 2)
    with pytest.raises(ParentMismatchError):
        journal.append([user("u", "m0")], expected=head)
    with pytest.raises(ParentMismatchError):
        journal.append([user("u", None)], expected=head)
    assert journal.append([user("u", "m1")], expected=head).head.seq == 4


def test_r9_only_the_first_node_or_one_after_a_reset_is_a_root(journal: SessionJournal) -> None:
    head = started(journal)
    head = journal.append([user("a", None)], expected=head).head
    head = journal.append([reset("r")], expected=head).head
    assert journal.append([user("b", None)], expected=head).head.seq == 4


# --- R10 ------------------------------------------------------------------------------------------


def test_r10_a_leaf_move_starts_at_the_current_leaf(journal: SessionJournal) -> None:
    head = started(journal, 3)
    with pytest.raises(InvalidLeafMoveError):
        journal.append([move("mv", "m1", "m0")], expected=head)


def test_r10_a_leaf_move_goes_to_a_known_node_or_none(journal: SessionJournal) -> None:
    head = started(journal, 3)
    with pytest.raises(InvalidLeafMoveError):
        journal.append([move("mv", "m2", "nowhere")], expected=head)
    with pytest.raises(InvalidLeafMoveError):
        journal.append([move("mv", "m2", "h")], expected=head)  # the header is not a node
    assert journal.head() == head
    head = journal.append([move("mv", "m2", "m0"), assistant("alt", "m0")], expected=head).head
    head = journal.append([move("mv2", "alt", None), user("root2", None)], expected=head).head
    assert head.seq == 8


def test_r10_abandoned_branches_stay_in_the_journal(journal: SessionJournal) -> None:
    head = started(journal, 3)
    journal.append([move("mv", "m2", "m0"), assistant("alt", "m0")], expected=head)
    assert {"m1", "m2", "alt"} <= {r.id for r in journal.read()}


def test_r10_references_to_nodes_must_name_known_nodes(journal: SessionJournal) -> None:
    head = started(journal, 2)
    bad = [
        Compaction(parent="m1", summary="s", first_kept="ghost"),
        ContextExclusion(parent="m1", target="ghost"),
    ]
    for i, body in enumerate(bad):
        with pytest.raises(UnknownNodeError):
            journal.append([NewRecord(id=f"x{i}", at=AT, body=body)], expected=head)
    ok = Compaction(parent="m1", summary="s", first_kept="m1")
    assert journal.append([NewRecord(id="c", at=AT, body=ok)], expected=head).head.seq == 4


# --- R11 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stop", [None, "", "streaming", "partial"])
def test_r11_a_streaming_partial_assistant_entry_is_refused(
    journal: SessionJournal, stop: str | None
) -> None:
    head = started(journal, 1)
    with pytest.raises(PartialAssistantError):
        journal.append([assistant("a", "m0", stop=stop)], expected=head)
    assert journal.head() == head


# --- R12 ------------------------------------------------------------------------------------------


def test_r12_the_committed_record_equals_what_replay_reads(journal: SessionJournal) -> None:
    head = started(journal)
    body = CustomEntry(parent=None, type="test.note", data={"z": 1, "a": [1.5, None], "nan": float("nan")})
    result = journal.append([NewRecord(id="c", at=AT, body=body)], expected=head)
    replayed = list(journal.read(after=1))
    assert list(result.records) == replayed
    assert replayed[0].body.data == {"a": [1.5, None], "nan": None, "z": 1}  # type: ignore[union-attr]


def test_r12_a_body_that_is_not_json_is_refused_before_writing(journal: SessionJournal) -> None:
    head = started(journal)
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
def test_r12_ids_and_timestamps_have_one_wire_form(journal: SessionJournal, field: str, value: str) -> None:
    head = started(journal)
    good = user("u", None)
    bad = msgspec.structs.replace(good, **{field: value})
    with pytest.raises(InvalidRecordError):
        journal.append([bad], expected=head)


# --- R13 ------------------------------------------------------------------------------------------


def test_r13_the_head_names_the_last_record(journal: SessionJournal) -> None:
    assert journal.head() == GENESIS
    started(journal, 2)
    last = list(journal.read())[-1]
    assert journal.head() == Head(last.seq, last.digest)


class _ListJournal:
    """A read-only journal over given lines, to hand verify() damaged bytes."""

    name = "damaged"

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = lines

    def read_lines(self, after: int = 0, limit: int | None = None) -> object:
        return iter(self._lines[after : None if limit is None else after + limit])


def test_r5_verify_names_the_first_record_that_breaks_a_session_rule() -> None:
    from waybook.codecs._wire import seal
    from waybook.journal import InMemoryJournal

    source = InMemoryJournal()
    started(source, 6)
    lines = list(source.read_lines())[:4]
    prev = list(source.read())[3].digest
    _, rogue = seal(5, user("rogue", None), prev)  # well chained, but not a child of the leaf
    report = verify(_ListJournal([*lines, rogue]))
    assert not report.ok
    assert report.bad_seq == 5
    assert report.records == 4
    assert "leaf" in (report.reason or "")


def test_r7_a_retry_of_part_of_a_committed_batch_is_not_taken_for_the_batch(journal: SessionJournal) -> None:
    head = journal.append([header()], expected=GENESIS).head
    first, second = user("p1", None, "a"), user("p2", "p1", "b")
    whole = journal.append([first, second], expected=head)
    assert journal.append([first, second], expected=head) == whole  # the exact retry
    with pytest.raises(OverlappingBatchError):
        journal.append([first], expected=head)  # its first record alone is not that batch
    assert journal.head() == whole.head


@pytest.mark.parametrize("after", ["1", 1.5, None])
def test_a_read_cursor_of_the_wrong_kind_is_refused_typed(journal: SessionJournal, after: object) -> None:
    from waybook.journal import InvalidArgumentError

    with pytest.raises(InvalidArgumentError):
        list(journal.read(after=after))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        list(journal.read_lines(after=after))  # type: ignore[arg-type]
