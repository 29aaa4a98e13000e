"""`waybook erase` attacked from its command line (issue 46, red team): every `--seq` a user or a script can
give is either erased or refused as a usage error (exit 2) naming `--seq`, never a traceback and never a
range expanded into memory before it is checked; nothing is written by a refused command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.killed_eraser import leave_pending
from tests.helpers.paths import ROOT
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
        ["migrate", path, "-o", tmp_path / "sealed\x1b[2J.jsonl"],
        ["erase", path, "--seq", "3", "--reason", "asked"],
        ["erase", "--resume", path],
    ):
        ran = waybook(*args)
        assert ran.returncode == 0, ran.stderr
        assert "\x1b" not in ran.stdout
        assert "\x07" not in ran.stdout
        assert "evil\\x1b]0;owned\\x07\\x1b[31m.jsonl" in ran.stdout


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="an empty file"),
        pytest.param(b'{"a": 1}\n', id="another tool's JSONL"),
        pytest.param(b"#!/bin/sh\necho hi\n", id="a script"),
    ],
)
@pytest.mark.parametrize("resume", [False, True], ids=["erase", "erase --resume"])
def test_a_file_that_is_not_a_journal_is_refused_as_show_refuses_it(
    tmp_path: Path, content: bytes, resume: bool
) -> None:
    """`erase` told an empty file or another tool's JSONL "the journal ends at seq 0" (or "no record 2"),
    a script "corrupt record at seq 1 ... restore the file from a copy", and `erase --resume` said of
    all three "no erasure was left unfinished", exit 0."""
    path = tmp_path / "other.jsonl"
    path.write_bytes(content)
    args = ["--resume", path] if resume else [path, "--seq", "2", "--reason", "asked"]
    ran = waybook("erase", *args)
    assert ran.returncode == 1
    assert f"waybook: {path}: not a waybook journal" in ran.stderr
    assert ran.stdout == ""
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.jsonl"]


@pytest.mark.parametrize("step", ["marked", "appended", "region 2 of 3", "checkpoint removed"])
def test_resume_after_a_sigkill_says_it_finished_the_interrupted_erasure(tmp_path: Path, step: str) -> None:
    """The writer's open finishes an erasure's marker before `finish_erasures` looks, so `erase --resume`
    said "no erasure was left unfinished" of a journal a read-only open refused and whose content it had
    just removed."""
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        for text in ("hello", SECRET, f"echo {SECRET}", f"again {SECRET}", "bye"):
            session.user(text)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.helpers.killed_eraser", str(path), step],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    assert waybook("show", path).returncode == 1  # refused: an erasure was interrupted
    ran = waybook("erase", "--resume", path, "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["interrupted"] is True
    assert waybook("verify", path).returncode == 0
    again = waybook("erase", "--resume", path)
    assert again.stdout.endswith("no erasure was left unfinished\n")


def test_a_long_range_prints_as_runs_of_seqs_and_skips_grouped_by_why(tmp_path: Path) -> None:
    """`--seq 2..N` printed every seq erased on one line and a line for every seq skipped: 10,000 records
    made a 60 KB line and thousands of "skipped" lines."""
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        for n in range(40):
            session.user(f"message {n}")
    for seq in ("3", "5"):  # erasure records 42 and 43
        assert waybook("erase", path, "--seq", seq, "--reason", "asked").returncode == 0
    ran = waybook("erase", path, "--seq", "2..43", "--reason", "asked")
    assert ran.returncode == 0, ran.stderr
    receipt = ran.stdout.split("receipt ")[1][:16]
    assert ran.stdout.splitlines() == [
        f"{path}: erased records 2, 4, 6..41 (erasure record 44; receipt {receipt})",
        "  skipped 3: already erased (by seq 42)",
        "  skipped 5: already erased (by seq 43)",
        "  skipped 42, 43: holds no content",
    ]


def pending(path: Path) -> None:
    """A sealed journal (header, five user messages) whose erasure of 3..5 (record 7) is pending: the
    eraser was killed after appending its erasure record, and its marker was then lost (removed by hand,
    or a restore that copied only the .jsonl). `verify` says ok, "erasure pending"."""
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        for text in ("hello", SECRET, f"echo {SECRET}", f"again {SECRET}", "bye"):
            session.user(text)
    leave_pending(path)  # its erasure record committed, its marker lost
    checked = waybook("verify", path)
    assert checked.returncode == 0
    assert "erasure pending: records 3, 4, 5" in checked.stdout


def test_erasing_a_record_a_pending_erasure_names_finishes_that_erasure_first(tmp_path: Path) -> None:
    """A second erasure of record 3 took it for itself, so the pending erasure 7 named a record it had
    not erased: `verify` went from "ok, erasure pending" to FAILED, by a command run as documented."""
    path = tmp_path / "s.jsonl"
    pending(path)
    ran = waybook("erase", path, "--seq", "3..4", "--reason", "asked again")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith(f"{path}: finished the pending erasure of records 3..5 first\n")
    checked = waybook("verify", path)
    assert checked.returncode == 0, checked.stdout
    assert "erasure pending" not in checked.stdout
    assert SECRET.encode() not in path.read_bytes()
