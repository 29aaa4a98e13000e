"""Redaction you can trust and extend (issue 27, finding 5): tool definitions in the header are masked
like message text; `password=` style assignments, a bare AWS secret key beside its key id and a URL
password holding `@` are caught; users add patterns on the command line or in a file; an export
without --redact says so on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from waybook import Session
from waybook._redact import Redactor, RedactPatternError, compile_patterns, read_patterns
from waybook.cli import main
from waybook.export.trajectories import Selection, TrajectoryExporter
from waybook.journal import InMemoryJournal, JsonlJournal

TOOL = {
    "name": "query",
    "description": "Runs SQL on postgres://admin:pw@db.internal/shop",
    "parameters": {
        "type": "object",
        "properties": {"sql": {"type": "string", "default": "password=hunter2"}},
    },
}


def session_with_tools(journal: InMemoryJournal | JsonlJournal) -> None:
    session = Session.create(journal, metadata={"tools": [TOOL]})
    session.user("How many orders? my key is AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    session.assistant("Connecting to mysql://root:p@ss@w0rd@db:3306 with secret=swordfish")


def test_a_tool_definition_in_the_header_is_redacted_like_message_text() -> None:
    journal = InMemoryJournal()
    session_with_tools(journal)
    exporter = TrajectoryExporter(journal, redact=True)
    (row,) = exporter.rows("openai", Selection("active"))
    assert exporter.redactor is not None
    assert exporter.redactor.counts["url-password"] == 2  # the tools once, the message once
    (turn,) = exporter.turns(Selection("active"))
    for exported in (row, turn):
        text = json.dumps(exported["tools"])
        assert "admin:pw" not in text
        assert "hunter2" not in text
        assert "[REDACTED:url-password]" in text


def test_secrets_in_messages_are_masked_assignments_aws_pairs_and_passwords_holding_at() -> None:
    journal = InMemoryJournal()
    session_with_tools(journal)
    (row,) = TrajectoryExporter(journal, redact=True).rows("openai", Selection("active"))
    text = json.dumps(row["messages"])
    for secret in ("wJalrXUtnFEMI", "AKIAIOSFODNN7EXAMPLE", "p@ss", "w0rd", "swordfish"):
        assert secret not in text
    assert "@db:3306" in text


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("password=hunter2", "hunter2"),
        ('"client_secret": "abc123xyz"', "abc123xyz"),
        ("DB_PASSWORD: s3cr3t!", "s3cr3t!"),
        ("export API_KEY=abcdef12345", "abcdef12345"),
        ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nAKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI"),
        ("redis://:p@ss@cache:6379", "p@ss"),
    ],
)
def test_each_new_kind_of_secret_is_masked(text: str, hidden: str) -> None:
    assert hidden not in Redactor().text(text)


def test_a_40_character_string_without_a_key_id_beside_it_is_left_alone() -> None:
    text = "commit 0123456789abcdef0123456789abcdef01234567 and tokens=5"
    assert Redactor().text(text) == text


def test_user_patterns_mask_whole_matches_or_their_secret_group() -> None:
    redactor = Redactor(extra=compile_patterns([r"ACME-[0-9]{6}", r"pin (?P<secret>\d{4})"]))
    assert redactor.text("id ACME-123456, pin 1234") == "id [REDACTED:custom], pin [REDACTED:custom]"
    assert redactor.counts == {"custom": 2}


def test_a_bad_user_pattern_is_a_value_error_naming_it() -> None:
    with pytest.raises(RedactPatternError, match=r"\[unclosed"):
        compile_patterns(["[unclosed"])
    with pytest.raises(RedactPatternError, match="empty string"):
        compile_patterns(["x*"])


def test_a_patterns_file_skips_blank_lines_and_comments() -> None:
    assert read_patterns("# ours\nACME-\\d+\n\n  # indented comment\nBETA\n") == ["ACME-\\d+", "BETA"]


# --- the command -------------------------------------------------------------------------------------


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        session.user("ticket ACME-123456 and BETA-77")
        session.assistant("noted")
    return path


def test_export_redact_pattern_is_repeatable_and_a_patterns_file_adds_more(
    session_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patterns = tmp_path / "patterns.txt"
    patterns.write_text("# team ids\nBETA-[0-9]+\n")
    out = tmp_path / "out.jsonl"
    argv = ["export", str(session_file), "--format", "openai", "-o", str(out)]
    status = main(
        [
            *argv,
            "--redact-pattern",
            r"ACME-\d+",
            "--redact-pattern",
            "noted",
            "--redact-patterns",
            str(patterns),
        ]
    )
    assert status == 0, capsys.readouterr().err
    text = out.read_text()
    assert "ACME-123456" not in text
    assert "BETA-77" not in text
    assert "noted" not in text
    assert "masked 3 secrets (custom: 3)" in capsys.readouterr().err


def test_export_with_a_bad_pattern_names_the_flag_and_writes_nothing(
    session_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    status = main(
        ["export", str(session_file), "--format", "openai", "-o", str(out), "--redact-pattern", "(x"]
    )
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("waybook: --redact-pattern:") or "--redact-pattern:" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_an_export_without_redact_says_on_stderr_that_it_was_not_redacted(
    session_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("openai", "sharegpt", "archival"):
        out = tmp_path / f"{fmt}.jsonl"
        assert main(["export", str(session_file), "--format", fmt, "-o", str(out)]) == 0
        assert "not redacted" in capsys.readouterr().err
    assert (
        main(["export", str(session_file), "--format", "openai", "--redact", "-o", str(tmp_path / "r.jsonl")])
        == 0
    )
    assert "not redacted" not in capsys.readouterr().err
