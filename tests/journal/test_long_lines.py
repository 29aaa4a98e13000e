"""Issue 12: open, verify and repair are linear in the length of a line (bench/long_lines.py times it).

The scanner used to copy the growing partial line once per chunk, quadratic in its length. Time is not
asserted here (machines are noisy); memory is: a torn line is never held whole, and a long committed line
is read as a whole once, after its newline.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from waybook import JsonlJournal, Session
from waybook.journal import verify_file

MB = 1 << 20


def peak_bytes_of(action: object) -> int:
    tracemalloc.start()
    try:
        action()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_32_mb_torn_line_is_detected_repaired_and_verified_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    with JsonlJournal(path) as journal:
        Session.create(journal, journal_id="long").user("kept")
    committed = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"seq":3,"id":"x","data":"')
        for _ in range(32):
            handle.write(b"z" * MB)

    def open_and_repair() -> None:
        with JsonlJournal(path, create=False) as journal:
            assert journal.damage is not None
            assert journal.damage.torn
            assert journal.repair().removed_bytes > 32 * MB

    assert peak_bytes_of(lambda: verify_file(path).torn_tail or None) < 8 * MB
    assert peak_bytes_of(open_and_repair) < 8 * MB, "the old scanner held the torn line, twice over"
    assert path.read_bytes() == committed


def test_a_long_committed_line_reads_back_whole_among_short_ones(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    text = "w" * (5 * MB + 123)
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="long", inline_limit=8 * MB)  # the line itself, no blob
        session.user("short")
        session.user(text)
        session.user("after")
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is None
        records = list(journal.read())
        assert [len(r.body.content[0].text) for r in records[1:]] == [5, len(text), 5]  # type: ignore[union-attr]
        assert journal.read_lines(after=2, limit=1).__next__().endswith(b'"}')
        session = Session(journal)
        session.user("more")
    cut = path.read_bytes()
    start = len(b"".join(cut.splitlines(keepends=True)[:2]))  # the long line (seq 3) starts here
    path.write_bytes(cut[: start + 3 * MB])  # torn inside the long line
    report = verify_file(path)
    assert report.torn_tail
    assert report.records == 2
