"""A reader serves only bytes it proved, for its whole life (issue 42.2): a record changed on disk after
the journal was opened and proved (same length, so nothing else about the file moves) is an integrity
error on the next read that would serve it, never served. The old code served it from every read of a
JSONL journal (61 of 61) and of the directory store's journals and feed (34 of 52).

Bytes a read command keeps in memory from its proving pass (`open_proven`) cannot change after the
proof, so those reads serve the bytes that were proved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from waybook import Session
from waybook.journal import JsonlJournal
from waybook.model import IntegrityError, Record
from waybook.stores import open_store

COUNT = 9  # a header and eight messages


def alter(path: Path, seq: int) -> None:
    """Change one byte of record `seq`'s text in place: same length, no digest recomputed."""
    data = bytearray(path.read_bytes())
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    line = bytes(data[starts[seq - 1] : starts[seq]])
    field = b'"text":"' if b'"text":"' in line else b'"id":"'  # a message's text; the header's id
    at = starts[seq - 1] + line.index(field) + len(field)
    data[at] = ord("Y") if data[at] != ord("Y") else ord("Z")
    path.write_bytes(bytes(data))  # (rewrites in place: the same inode, the same size)


def written(path: Path) -> None:
    session = Session.create(JsonlJournal(path), journal_id="s")
    for i in range(COUNT - 1):
        session.user(f"message {i}") if i % 2 == 0 else session.assistant(f"reply {i}")
    session.journal.close()


def shapes(count: int) -> Iterator[tuple[str, Callable[[JsonlJournal], list[tuple[int, object]]]]]:
    """Every way of reading, each giving (seq, what was served): everything, from each cursor, one
    record at a time, and the lines."""
    yield "read()", lambda j: [(r.seq, r) for r in j.read()]
    yield "read_lines()", lambda j: list(enumerate(j.read_lines(), start=1))
    for after in range(count):
        yield f"read(after={after})", lambda j, a=after: [(r.seq, r) for r in j.read(after=a)]
        yield (
            f"read(after={after}, limit=1)",
            lambda j, a=after: [(r.seq, r) for r in j.read(after=a, limit=1)],
        )


def served_changed(journal: JsonlJournal, proved: dict[int, tuple[Record, bytes]]) -> list[str]:
    """The read shapes that served anything other than what the open proved (none may)."""
    bad = []
    for name, read in shapes(COUNT):
        try:
            got = read(journal)
        except IntegrityError:
            continue  # refused: never served
        if any(value not in proved[seq] for seq, value in got):
            bad.append(name)
    return bad


@pytest.mark.parametrize("seq", range(1, COUNT + 1))
def test_a_record_changed_after_the_open_proved_it_is_never_served(tmp_path: Path, seq: int) -> None:
    path = tmp_path / "s.jsonl"
    written(path)
    with JsonlJournal(path, readonly=True) as journal:
        proved = {r.seq: (r, line) for r, line in zip(journal.read(), journal.read_lines(), strict=True)}
        alter(path, seq)
        assert served_changed(journal, proved) == []
        with pytest.raises(IntegrityError, match=f"seq {seq}"):
            list(journal.read())


def test_a_writer_never_serves_its_own_records_changed_after_it_wrote_them(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="s")
        session.user("mine")
        session.assistant("also mine")
        alter(path, 2)
        with pytest.raises(IntegrityError, match="seq 2"):
            list(journal.read())
        assert [r.seq for r in journal.read(limit=1)] == [1]  # the bytes before the change still read


def test_bytes_a_read_command_kept_from_its_proof_are_served_as_proved(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    written(path)
    journal, report = JsonlJournal.open_proven(path)
    with journal:
        assert report.ok
        before = list(journal.read())
        alter(path, 3)
        assert list(journal.read()) == before  # from memory: the proved bytes, not the changed ones


def test_a_directory_stores_journals_and_feed_never_serve_a_changed_record(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        session = Session(store.create("s"))
        session.user("first")
        session.assistant("second")
        before = [(e.journal_id, e.seq, e.record) for e in store.feed()]
        journal = store.open("s")
        assert len(list(journal.read())) == 3
        alter(tmp_path / "store" / "journals" / "s.jsonl", 2)
        with pytest.raises(IntegrityError):
            list(journal.read())
        with pytest.raises(IntegrityError):
            list(store.feed())
        served = [(e.journal_id, e.seq, e.record) for e in store.feed(limit=3)]
        assert served == before[:3]  # the catalog's records before it, unchanged, still read
