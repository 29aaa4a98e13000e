"""Issue 14: no command harms its input; damage and foreign files are never silent."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.cli.test_cli import session_file
from tests.helpers.cli_runner import waybook
from waybook import JsonlJournal
from waybook.model import NotAJournalError

__all__ = ["session_file"]

FORMATS = [["openai"], ["sharegpt"], ["archival"], ["pi"], ["openai", "--pairs"]]


def export(journal: Path, out: Path | str, *extra: str) -> tuple[int, str]:
    run = waybook("export", journal, "--format", *extra, "-o", out)
    return run.returncode, run.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_never_writes_over_its_own_journal(session_file: Path, fmt: list[str]) -> None:
    before = session_file.read_bytes()
    for force in ([], ["--force"]):
        code, err = export(session_file, session_file, *fmt, *force)
        assert code == 2
        assert "that is the input" in err
        assert session_file.read_bytes() == before
    assert waybook("verify", session_file).returncode == 0


def test_an_export_never_replaces_another_journal_even_with_force(session_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_bytes(session_file.read_bytes())
    for force in ([], ["--force"]):
        code, err = export(session_file, other, "openai", *force)
        assert code == 2
        assert "is a waybook journal" in err
    assert other.read_bytes() == session_file.read_bytes()


def test_an_existing_output_is_replaced_only_with_force(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    out.write_text("keep me\n")
    code, err = export(session_file, out, "openai")
    assert code == 2
    assert "--force" in err
    assert out.read_text() == "keep me\n"
    code, _ = export(session_file, out, "openai", "--force")
    assert code == 0
    assert json.loads(out.read_text())["messages"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")], "no temp file left beside it"


@pytest.mark.parametrize("fmt", FORMATS)
def test_exports_are_created_0600(session_file: Path, tmp_path: Path, fmt: list[str]) -> None:
    out = tmp_path / "out.jsonl"
    code, err = export(session_file, out, *fmt)
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_a_forced_export_over_an_existing_file_is_0600_too(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    out.chmod(0o644)
    assert export(session_file, out, "archival", "--force")[0] == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_an_export_to_a_directory_is_a_usage_error(session_file: Path, tmp_path: Path) -> None:
    code, err = export(session_file, tmp_path, "openai")
    assert code == 2
    assert "is a directory" in err


def test_an_export_into_a_missing_directory_is_a_usage_error_naming_it(
    session_file: Path, tmp_path: Path
) -> None:
    code, err = export(session_file, tmp_path / "nowhere" / "out.jsonl", "openai")
    assert code == 2
    assert err == (
        f"waybook: {tmp_path / 'nowhere' / 'out.jsonl'}: there is no directory {tmp_path / 'nowhere'}; "
        "create it, or write the output elsewhere\n"
    )


@pytest.fixture
def one_line_export(session_file: Path, tmp_path: Path) -> Path:
    out = tmp_path / "export.jsonl"
    assert export(session_file, out, "openai")[0] == 0
    return out


def test_repair_refuses_a_file_that_is_not_a_waybook_journal(one_line_export: Path) -> None:
    before = one_line_export.read_bytes()
    run = waybook("repair", one_line_export, "--yes")
    assert run.returncode == 1
    assert "not a waybook journal" in run.stderr
    assert one_line_export.read_bytes() == before
    assert not list(one_line_export.parent.glob("*.quarantine"))


def test_the_journal_layer_refuses_to_repair_a_file_without_a_header(one_line_export: Path) -> None:
    before = one_line_export.read_bytes()
    with JsonlJournal(one_line_export, create=False) as journal, pytest.raises(NotAJournalError):
        journal.repair()
    with pytest.raises(NotAJournalError):
        JsonlJournal(one_line_export, create=False, on_torn_tail="repair")
    assert one_line_export.read_bytes() == before


@pytest.mark.parametrize("command", ["verify", "tree", "log", "show", "diff", "memory", "export"])
def test_read_commands_say_a_foreign_file_is_not_a_waybook_journal(
    command: str, one_line_export: Path
) -> None:
    extra = {"diff": ["--leaf", "a", "--leaf", "b"], "export": ["--format", "openai", "-o", "-"]}
    run = waybook(command, one_line_export, *extra.get(command, []))
    assert run.returncode == 1
    assert "not a waybook journal" in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["log"], "assistant"),
        (["show"], "hi"),
        (["tree"], "nodes"),
        (["show", "--json"], '"records"'),
        (["export", "--format", "openai", "--branches", "all", "-o", "-"], '"messages"'),
    ],
)
def test_read_commands_show_complete_records_and_report_a_torn_tail(
    session_file: Path, command: list[str], shown: str
) -> None:
    session_file.write_bytes(session_file.read_bytes()[:-15])
    run = waybook(command[0], session_file, *command[1:])
    assert run.returncode == 1
    assert "torn tail" in run.stderr
    assert "waybook repair" in run.stderr
    assert shown in run.stdout


def test_repair_json_prints_only_json(session_file: Path) -> None:
    session_file.write_bytes(session_file.read_bytes()[:-15])
    run = waybook("repair", session_file, "--yes", "--json")
    assert run.returncode == 0
    receipt = json.loads(run.stdout)
    assert receipt["repaired"] is True
    clean = waybook("repair", session_file, "--json")
    assert json.loads(clean.stdout)["repaired"] is False
