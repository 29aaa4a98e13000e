"""Issue 12 (R3 on disk): a batch is committed whole or not at all, and a reader can tell which.

Records of a multi-record batch carry `"batch":[index,size]` inside the bytes their digest covers; a
record appended alone keeps the bytes it always had. A file that ends inside a batch ends in a torn tail
that starts where the batch starts: readers see none of it, and repair quarantines all of it.
"""

from __future__ import annotations

import errno
import itertools
import shutil
from pathlib import Path

import pytest

from tests.helpers.builders import AT, assistant, header, move, user
from tests.helpers.faults import FailingWriteOps
from tests.helpers.paths import FIXTURES
from waybook import verify
from waybook.codecs._wire import decode_record, encode_record, line_digest, seal
from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.model import (
    GENESIS,
    BrokenBatchError,
    CorruptJournalError,
    Header,
    NewRecord,
    TornTailError,
    UserMessage,
    WriteFailedError,
    WrongTypeError,
    text,
)
from waybook.model._head import Head

GOLDEN = FIXTURES / "wire" / "batches" / "batches-v1.jsonl"


def golden_appends() -> list[list[NewRecord]]:
    """The appends of the golden file: alone, alone, a batch of three, alone, a batch of two."""
    return [
        [header()],
        [user("u1", None, "one")],
        [assistant("a1", "u1", "two"), user("u2", "a1", "three"), move("mv", "u2", "u1")],
        [user("u3", "u1", "four")],
        [assistant("a3", "u3", "five"), user("u4", "a3", "six")],
    ]


def write_golden(path: Path) -> None:
    with JsonlJournal(path) as journal:
        head = GENESIS
        for batch in golden_appends():
            head = journal.append(batch, expected=head).head


def batch_bounds(lines: list[bytes]) -> list[int]:
    """Byte offsets where a whole batch ends (after its last newline), from the golden appends."""
    sizes = [len(batch) for batch in golden_appends()]
    bounds, pos, index = [0], 0, 0
    for size in sizes:
        pos += sum(len(line) + 1 for line in lines[index : index + size])
        index += size
        bounds.append(pos)
    return bounds


# --- the format -----------------------------------------------------------------------------------


def test_todays_writer_still_writes_the_golden_batch_file(tmp_path: Path) -> None:
    """If this fails the on-disk format changed: that needs a new tag version, not a new golden file."""
    path = tmp_path / "b.jsonl"
    write_golden(path)
    assert path.read_bytes() == GOLDEN.read_bytes()


def test_batch_records_carry_their_place_and_single_appends_keep_their_bytes() -> None:
    lines = GOLDEN.read_bytes().splitlines()
    records = [decode_record(line) for line in lines]
    assert [r.batch for r in records] == [None, None, (1, 3), (2, 3), (3, 3), None, (1, 2), (2, 2)]
    assert [b'"batch"' in line for line in lines] == [r.batch is not None for r in records]
    for line, record in zip(lines, records, strict=True):
        assert encode_record(record) == line
        assert line_digest(line) == record.digest, "the place is inside the bytes the digest covers"
    _, alone = seal(2, user("u1", None, "one"), records[0].digest)
    assert alone == lines[1], "a record appended alone is sealed exactly as before batches had places"


def test_a_journal_written_before_batches_had_places_still_reads_and_verifies(tmp_path: Path) -> None:
    lines, prev = [], GENESIS.digest
    for seq, new in enumerate([header(), user("u1", None), assistant("a1", "u1"), user("u2", "a1")], 1):
        record, line = seal(seq, new, prev)  # what the old writer wrote, even for one batch of three
        lines.append(line)
        prev = record.digest
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is None
        assert journal.head().seq == 4
        assert verify(journal).ok
        journal.append([user("u3", "u2")], expected=journal.head())
    assert InMemoryJournal.from_lines(lines).head().seq == 4


def test_a_place_outside_its_batch_is_refused_on_decode() -> None:
    line = GOLDEN.read_bytes().splitlines()[2]
    for bad in (b'"batch":[0,3]', b'"batch":[1,1]', b'"batch":[1]', b'"batch":"1/3"'):
        with pytest.raises(WrongTypeError):
            decode_record(line.replace(b'"batch":[1,3]', bad))


# --- cut anywhere: readers see whole batches only -------------------------------------------------


def test_cutting_the_file_at_every_byte_shows_whole_batches_only_and_repair_quarantines_the_cut_one(
    tmp_path: Path,
) -> None:
    data = GOLDEN.read_bytes()
    lines = data.splitlines()
    bounds = batch_bounds(lines)
    heads = [GENESIS] + [Head.of(decode_record(lines[end - 1])) for end in _ends(golden_appends())]
    # Repair (three fsyncs) at the first, middle and last cut inside each batch; detection at every byte.
    repair_at = {c for lo, hi in itertools.pairwise(bounds) for c in (lo + 1, (lo + hi) // 2, hi - 1)}
    for cut in range(len(data) + 1):
        whole = max(i for i, bound in enumerate(bounds) if bound <= cut)
        path = tmp_path / f"cut-{cut}.jsonl"
        path.write_bytes(data[:cut])
        journal = JsonlJournal(path, create=False)
        assert journal.head() == heads[whole], cut
        assert len(list(journal.read())) == heads[whole].seq, cut
        assert verify(journal).ok
        if cut == bounds[whole]:
            assert journal.damage is None, cut
        else:
            damage = journal.damage
            assert damage is not None, cut
            assert damage.torn, cut
            assert (damage.offset, damage.seq) == (bounds[whole], heads[whole].seq + 1), cut
            with pytest.raises(TornTailError):
                journal.append([user("x", None)], expected=journal.head())
            assert path.read_bytes() == data[:cut], "detection changes nothing"
            if cut not in repair_at:
                journal.close()
                path.unlink()
                continue
            receipt = journal.repair()
            assert Path(receipt.quarantine_path or "").read_bytes() == data[bounds[whole] : cut]
            assert path.read_bytes() == data[: bounds[whole]], "the whole cut batch is quarantined"
        journal.close()
        path.unlink()


def _ends(appends: list[list[NewRecord]]) -> list[int]:
    ends, total = [], 0
    for batch in appends:
        total += len(batch)
        ends.append(total)
    return ends


def test_complete_lines_of_a_cut_batch_are_never_read_as_committed(tmp_path: Path) -> None:
    """The SIGKILL case of the issue: whole lines of a batch of 64 reached the file, the rest did not."""
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        head = journal.append([header()], expected=GENESIS).head
        batch = [user(f"m{i}", f"m{i - 1}" if i else None, "x" * 100) for i in range(64)]
        journal.append(batch, expected=head)
    lines = path.read_bytes().splitlines(keepends=True)
    for kept in (6, 12, 18, 63):
        path.write_bytes(b"".join(lines[: 1 + kept]))
        with JsonlJournal(path, create=False) as journal:
            assert journal.head() == head
            assert journal.damage is not None
            assert journal.damage.torn
            assert "cut short" in journal.damage.reason
            assert journal.damage.seq == 2


def test_a_cut_batch_followed_by_other_records_is_corruption_at_the_batch(tmp_path: Path) -> None:
    data = GOLDEN.read_bytes()
    lines = data.splitlines(keepends=True)
    spliced = b"".join(lines[:3] + lines[5:])  # batch [1,3] loses records 2 and 3; the rest follows
    path = tmp_path / "s.jsonl"
    path.write_bytes(spliced)
    with pytest.raises(CorruptJournalError) as caught:
        JsonlJournal(path, create=False)
    assert caught.value.seq == 3
    assert caught.value.offset == len(b"".join(lines[:2]))
    with JsonlJournal(path, create=False, read_prefix=True) as journal:
        assert journal.head().seq == 2


def test_loading_lines_that_end_in_a_cut_batch_is_refused_and_verify_names_it() -> None:
    lines = GOLDEN.read_bytes().splitlines()
    with pytest.raises(BrokenBatchError) as caught:
        InMemoryJournal.from_lines(lines[:4])
    assert caught.value.seq == 3
    assert InMemoryJournal.from_lines(lines[:5]).head().seq == 5


# --- a failed write commits nothing ---------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG, errno.EIO])
def test_a_batch_whose_write_fails_midway_commits_nothing_and_leaves_the_file_as_it_was(
    tmp_path: Path, code: int
) -> None:
    path = tmp_path / "s.jsonl"
    write_golden(path)
    before = path.read_bytes()
    ops = FailingWriteOps(fail_after_bytes=700, code=code)
    journal = JsonlJournal(path, create=False, file_ops=ops)
    head = journal.head()
    batch = [user(f"n{i}", "u4" if i == 0 else f"n{i - 1}", "y" * 300) for i in range(8)]
    with pytest.raises(WriteFailedError) as caught:
        journal.append(batch, expected=head)
    assert caught.value.rolled_back
    assert caught.value.head == head
    assert ops.written > 0, "some bytes reached the file before the failure"
    assert path.read_bytes() == before, "nothing was written"
    assert journal.head() == head
    ops.fail_after_bytes = None
    assert journal.append(batch, expected=head).head.seq == head.seq + 8, "the object stays usable"
    journal.close()


def test_a_failed_write_that_cannot_be_undone_leaves_a_torn_tail_no_reader_trusts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_golden(path)
    ops = FailingWriteOps(fail_after_bytes=2000, code=errno.EIO, truncate_fails=True)
    journal = JsonlJournal(path, create=False, file_ops=ops)
    head = journal.head()
    batch = [user(f"n{i}", "u4" if i == 0 else f"n{i - 1}", "y" * 300) for i in range(8)]
    with pytest.raises(WriteFailedError) as caught:
        journal.append(batch, expected=head)
    assert not caught.value.rolled_back
    with JsonlJournal(path, create=False) as reader:
        assert reader.head() == head, "complete lines of the cut batch are not committed"
        assert reader.damage is not None
        assert reader.damage.torn
        assert reader.repair().head == head


def test_sealing_a_record_without_a_place_writes_no_batch_field() -> None:
    new = NewRecord(id="h", at=AT, body=Header(journal="test", creator="tests"))
    body = UserMessage(parent=None, content=text("hello"))
    assert seal(1, new, GENESIS.digest) == seal(1, new, GENESIS.digest, None)
    assert b'"batch"' not in seal(2, NewRecord(id="u", at=AT, body=body), GENESIS.digest)[1]


def test_a_memory_create_that_evicts_and_then_fails_to_write_keeps_the_evicted_file(tmp_path: Path) -> None:
    """Issue 12: the eviction and the new file are one batch; a failed write leaves both as they were."""
    from waybook.memory import Limits, Memory

    path = tmp_path / "memory.jsonl"
    ops = FailingWriteOps(fail_after_bytes=None, code=errno.EFBIG)
    journal = JsonlJournal(path, file_ops=ops)
    memory = Memory(journal, scope="agent", limits=Limits(max_files=1))
    assert memory.execute({"command": "create", "path": "/memories/old.md", "text": "keep me"}).ok
    before = path.read_bytes()
    rehearsal = tmp_path / "rehearsal.jsonl"  # the same create without a fault, to learn its lines
    shutil.copyfile(path, rehearsal)
    with JsonlJournal(rehearsal, create=False) as copy:
        create = {"command": "create", "path": "/memories/new.md", "text": "n" * 500}
        assert Memory(copy, scope="agent", limits=Limits(max_files=1)).execute(create).ok
    evicting, _ = rehearsal.read_bytes()[len(before) :].splitlines(keepends=True)
    assert b'"batch":[1,2]' in evicting, "the eviction and the write are one batch"
    ops.fail_after_bytes = ops.written + len(evicting)  # the eviction's whole line goes in, then EFBIG
    result = memory.execute(create)
    assert result.error is not None
    assert result.error.code == "STORAGE_ERROR"
    assert path.read_bytes() == before, "nothing of the batch is on disk"
    assert set(memory.state().files) == {"/memories/old.md"}, "the evicted file is still there"
    journal.close()
    with JsonlJournal(path, create=False) as reopened:
        assert set(Memory(reopened, scope="agent").state().files) == {"/memories/old.md"}
