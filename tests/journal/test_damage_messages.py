"""Damage keeps its place (issue 27): `verify` names the first bad record, and the refusal to repair
corruption tells a CLI user which commands to run, never a Python option."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.builders import chat, header
from waybook import GENESIS, JsonlJournal, cli
from waybook.journal import verify_file


def write(path: Path, nodes: int = 10) -> bytes:
    with JsonlJournal(path, sidecar=False) as journal:
        head = journal.append([header()], expected=GENESIS).head
        for record in chat(nodes):
            head = journal.append([record], expected=head).head
    return path.read_bytes()


def flip_record(path: Path, data: bytes, seq: int) -> None:
    starts = [0, *(i + 1 for i, byte in enumerate(data[:-1]) if byte == 0x0A)]
    changed = bytearray(data)
    changed[starts[seq - 1] + 30] ^= 1
    path.write_bytes(bytes(changed))


def test_verify_names_the_first_bad_seq(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    flip_record(path, write(path), 5)
    report = verify_file(path)
    assert (report.ok, report.bad_seq, report.head.seq) == (False, 5, 4)
    assert cli.main(["verify", str(path)]) == 1
    assert "seq 5" in capsys.readouterr().out


def test_repair_refuses_corruption_naming_cli_commands_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    data = write(path)
    flip_record(path, data, 5)
    before = path.read_bytes()
    assert cli.main(["repair", str(path), "--yes"]) == 1
    err = capsys.readouterr().err
    assert "seq 5" in err
    assert f"waybook verify {path}" in err
    assert "read_prefix" not in err
    assert "JsonlJournal" not in err
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "command", [["tree"], ["show", "--context"], ["log"], ["export", "--format", "openai", "-o", "-"]]
)
def test_a_read_command_on_a_corrupt_journal_names_cli_commands_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "s.jsonl"
    flip_record(path, write(path), 5)
    before = path.read_bytes()
    assert cli.main([command[0], str(path), *command[1:]]) == 1
    err = capsys.readouterr().err
    assert "corrupt record at seq 5" in err
    assert f"waybook verify {path}" in err
    assert f"waybook view {path} -o OUT.html" in err
    assert "read_prefix" not in err
    assert path.read_bytes() == before


def test_a_damaged_journal_in_a_store_names_cli_commands_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from waybook.stores import open_store

    with open_store(f"file:{tmp_path}") as store:
        journal = store.create("s")
        head = journal.head()
        for record in chat(10):
            head = journal.append([record], expected=head).head
    path = tmp_path / "journals" / "s.jsonl"
    flip_record(path, path.read_bytes(), 5)
    assert cli.main(["tree", "--store", f"file:{tmp_path}", "s"]) == 1
    err = capsys.readouterr().err
    assert "corrupt record at seq 5" in err
    assert "waybook verify" in err
    assert "read_prefix" not in err


def test_verify_names_the_bad_record_inside_a_batch_and_where_the_batch_starts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path, sidecar=False) as journal:
        head = journal.append([header()], expected=GENESIS).head
        journal.append(list(chat(10)), expected=head)  # seq 2..11, one batch
    flip_record(path, path.read_bytes(), 8)
    report = verify_file(path)
    assert (report.ok, report.bad_seq, report.head.seq) == (False, 8, 1)
    assert report.reason is not None
    assert "uncommitted from seq 2" in report.reason
