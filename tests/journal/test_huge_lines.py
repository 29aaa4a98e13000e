"""Issue 42.6: memory stays bounded for any line. A complete line longer than any record's line (
MAX_LINE_BYTES) is damage at its seq, found without ever holding the line: the old code decoded a 1 GB
line whole (25 s and 7.2 GB for the default open; MemoryError under an 8 GB cap for verify, repair, ls
and store.open), so the file could not even be repaired. Memory is measured as the peak RSS of a child
process (VmHWM) that opens, verifies and repairs the file, with the CLI's `waybook repair PATH --yes`.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.cli_runner import installed_env
from waybook import JsonlJournal, Session
from waybook.codecs._wire import MAX_LINE_BYTES
from waybook.journal import verify_file
from waybook.model import CorruptJournalError

MB = 1 << 20
GB = 1 << 30


def journal_then_a_line(path: Path, size: int, *, after: bytes = b"") -> bytes:
    """A valid three-record journal, then one complete line of `size` bytes (JSON-looking text, the
    middle of it a sparse run of zero bytes so a gigabyte costs no disk), then `after`. Returns the
    bytes of the valid journal."""
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="huge")
        session.user("kept")
        session.assistant("also kept")
    committed = path.read_bytes()
    head = b'{"seq":4,"id":"x","at":"2026-01-01T00:00:00Z","body":{"text":"'
    tail = b'"}}\n'
    with path.open("r+b") as handle:
        handle.seek(len(committed))
        handle.write(head)
        handle.seek(len(committed) + size - len(tail))
        handle.write(tail + after)
    return committed


PEAK = """
import sys
def peak_mib() -> float:
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
"""


def child(body: str, *args: str) -> list[str]:
    script = PEAK + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=installed_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split("\n")


def test_a_one_gigabyte_final_line_is_a_torn_tail_that_open_verify_and_repair_handle_within_100_mb(
    tmp_path: Path,
) -> None:
    path = tmp_path / "huge.jsonl"
    committed = journal_then_a_line(path, GB)
    out = child(
        """
        from waybook import JsonlJournal
        from waybook.journal import verify_file
        path = sys.argv[1]
        report = verify_file(path)
        print(report.torn_tail, report.records, report.bad_seq)
        with JsonlJournal(path, create=False, readonly=True) as journal:
            print(journal.head().seq, journal.damage.seq, journal.damage.torn)
        print(round(peak_mib()))
        """,
        str(path),
    )
    assert out[0] == "True 3 4"
    assert out[1] == "3 4 True"
    assert int(out[2]) < 100, f"peak {out[2]} MiB"
    repaired = child(
        """
        from waybook.cli import main
        code = main(["repair", sys.argv[1], "--yes"])
        print(code)
        print(round(peak_mib()))
        """,
        str(path),
    )
    assert repaired[-3] == "0"  # the exit code
    assert int(repaired[-2]) < 100, f"peak {repaired[-2]} MiB"
    assert path.read_bytes() == committed
    assert verify_file(path).ok


def test_an_overlong_line_before_valid_records_is_corruption_naming_its_seq(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    journal_then_a_line(path, MAX_LINE_BYTES + 1, after=b'{"seq":5}\n')
    report = verify_file(path)
    assert not report.ok
    assert not report.torn_tail
    assert report.bad_seq == 4
    assert "limit of a journal line" in (report.reason or "")
    with pytest.raises(CorruptJournalError, match="seq 4"):
        JsonlJournal(path, create=False, readonly=True)


def test_a_line_at_the_limit_is_still_read_and_proved(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    journal_then_a_line(path, MAX_LINE_BYTES)  # not over the limit: decoded, and refused for what it is
    report = verify_file(path)
    assert report.bad_seq == 4
    assert "limit of a journal line" not in (report.reason or "")
