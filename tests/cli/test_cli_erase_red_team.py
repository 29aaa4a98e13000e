"""`waybook erase` attacked from its command line (issue 46, red team): every `--seq` a user or a script can
give is either erased or refused as a usage error (exit 2) naming `--seq`, never a traceback and never a
range expanded into memory before it is checked; nothing is written by a refused command."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import JsonlJournal, Session

SECRET = "red-team-erased-secret-5c1e"


def chat(path: Path) -> None:
    """A sealed journal: header (1), two user messages (2, 3), an answer (4)."""
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        session.user("hello")
        session.user(SECRET)
        session.assistant(f"you said {SECRET}")


@pytest.mark.parametrize(
    ("seq", "says"),
    [
        pytest.param("2..1" + "0" * 30, "ends at seq 4", id="a range to 10**30"),
        pytest.param("1" * 5000, "ends at seq 4", id="a seq of 5000 digits"),
        pytest.param("2.." + "9" * 5000, "ends at seq 4", id="a range to 5000 digits"),
        pytest.param("99", "ends at seq 4", id="a seq past the head"),
        pytest.param("3..99", "ends at seq 4", id="a range past the head"),
        pytest.param("1", "header", id="the header"),
        pytest.param("1..4", "header", id="a range from the header"),
    ],
)
def test_a_seq_the_journal_does_not_hold_is_a_usage_error_naming_seq_and_nothing_is_written(
    tmp_path: Path, seq: str, says: str
) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    before = path.read_bytes()
    ran = waybook("erase", path, f"--seq={seq}", "--reason", "asked")
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith("waybook: --seq ")
    assert says in ran.stderr
    assert len(ran.stderr) < 400  # the value is quoted cut, not 5000 digits
    assert ran.stdout == ""
    assert path.read_bytes() == before


def test_a_huge_range_on_a_small_journal_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    """`--seq 2..50000000` took 2.4 GB and 6 s to build a list of fifty million seqs before the erasure
    refused it; the range is checked against the head first."""
    path = tmp_path / "s.jsonl"
    chat(path)
    tracemalloc.start()
    try:
        ran = waybook("erase", path, "--seq", "2..50000000", "--reason", "asked")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ran.returncode == 2
    assert "--seq '2..50000000'" in ran.stderr
    assert peak < 50_000_000


def test_overlapping_and_repeated_seqs_erase_each_record_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    ran = waybook("erase", path, "--seq", "3..4", "--seq", "3", "--seq", "4..4", "--reason", "asked")
    assert ran.returncode == 0, ran.stderr
    assert "erased records 3, 4 (erasure record 5;" in ran.stdout
    assert SECRET.encode() not in path.read_bytes()
    assert waybook("verify", path).returncode == 0


def test_a_hostile_file_name_reaches_the_terminal_escaped_from_erase_and_migrate(tmp_path: Path) -> None:
    """`verify` showed `evil\\x1b[31m.jsonl`; `erase`, `erase --resume`, `migrate` printed the ESC."""
    path = tmp_path / "evil\x1b]0;owned\x07\x1b[31m.jsonl"
    chat(path)
    for args in (
        ["erase", path, "--seq", "3", "--reason", "asked"],
        ["erase", "--resume", path],
        ["migrate", path, "-o", tmp_path / "sealed\x1b[2J.jsonl"],
    ):
        ran = waybook(*args)
        assert ran.returncode == 0, ran.stderr
        assert "\x1b" not in ran.stdout
        assert "\x07" not in ran.stdout
        assert "evil\\x1b]0;owned\\x07\\x1b[31m.jsonl" in ran.stdout
