"""Terminal output that fits (issue 48): `ls --long` cuts metadata values to the width (the whole value
with `--json`), widths count wide characters (an emoji takes two columns), and `show` pages on a terminal."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.helpers.cli_runner import on_terminal, waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook import JsonlJournal, Session
from waybook.commands.terminal import fit

CODEX = SHARED_FIXTURES / "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CLAUDE = SHARED_FIXTURES / "claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PAGER = """import os, sys
with open(os.environ["PAGED_INTO"], "wb") as out:
    out.write(sys.stdin.buffer.read())
print("paged:", os.environ["LESS"])
"""


def shown(raw: bytes) -> list[str]:
    return ANSI.sub("", raw.decode()).replace("\r", "").splitlines()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Codex's rollout (its header holds the whole system prompt) and a Claude Code session, imported."""
    if not (CODEX.is_file() and CLAUDE.is_file()):
        pytest.skip("the shared fixtures are not on this machine")
    url = f"file:{tmp_path_factory.mktemp('real')}/store"
    assert waybook("import", "codex", CODEX, "--store", url, "cx").returncode == 0
    assert waybook("import", "claude-code", CLAUDE, "--store", url, "cc").returncode == 0
    return url


@pytest.mark.parametrize(
    ("line", "size", "cut"),
    [
        ("abc", 3, "abc"),
        ("abcd", 3, "ab…"),
        ("✅ done", 7, "✅ done"),
        ("✅ done ✅✅", 8, "✅ done…"),
        ("✅✅✅", 4, "✅…"),  # never half an emoji
        ("日本語のテキスト", 9, "日本語の…"),
        ("e\u0301t\u00e9", 3, "e\u0301t\u00e9"),  # a combining accent takes no column
    ],
)
def test_a_line_is_cut_by_terminal_columns_not_characters(line: str, size: int, cut: str) -> None:
    assert fit(line, size) == cut
    assert cell_len(fit(line, size)) <= size


def test_ls_long_is_one_line_a_journal_in_80_columns_and_json_keeps_every_value_whole(
    real_store: str,
) -> None:
    status, raw = on_terminal("ls", "--store", real_store, "--long", columns=80)
    assert status == 0
    lines = shown(raw)
    assert len(lines) == 1 + 4  # the header, Codex's session, Claude Code's and its two sub-agents
    assert all(cell_len(line) <= 80 for line in lines), [cell_len(line) for line in lines]
    codex = next(line for line in lines if line.startswith("cx "))
    assert codex.endswith("codex.base_instructions.te…")  # cut at the edge, not wrapped
    (listed,) = [
        j
        for j in json.loads(waybook("ls", "--store", real_store, "--json").stdout)["journals"]
        if j["id"] == "cx"
    ]
    assert len(listed["metadata"]["codex"]["base_instructions"]["text"]) > 10_000  # the whole prompt


def test_log_at_80_columns_fits_a_session_with_emoji(real_store: str) -> None:
    status, raw = on_terminal("log", "cc", "--store", real_store, columns=80)
    assert status == 0
    lines = shown(raw)
    (ready,) = [line for line in lines if "Bash -> 📋 Ready work" in line]  # Claude Code's own emoji
    assert cell_len(ready) == 80  # cut at the edge: one column more wrapped it onto a second line
    assert max(cell_len(line) for line in lines) <= 80


def a_session(path: Path) -> Path:
    session = Session.create(JsonlJournal(path), journal_id="paged")
    for n in range(30):
        session.user(f"question {n}")
        session.assistant(f"answer {n}")
    session.journal.close()
    return path


def test_show_on_a_terminal_goes_through_the_pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pager.py").write_text(PAGER)
    monkeypatch.setenv("PAGER", f"{sys.executable} {tmp_path / 'pager.py'}")
    monkeypatch.setenv("PAGED_INTO", str(tmp_path / "paged.txt"))
    monkeypatch.delenv("WAYBOOK_PAGER", raising=False)
    monkeypatch.delenv("LESS", raising=False)
    status, raw = on_terminal("show", a_session(tmp_path / "s.jsonl"), "--context")
    assert status == 0
    paged = (tmp_path / "paged.txt").read_text()
    assert "question 0" in paged
    assert "answer 29" in paged
    assert shown(raw) == ["paged: FRX"]  # the terminal got what the pager wrote, nothing beside it


def test_no_pager_and_a_pipe_write_straight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pager.py").write_text(PAGER)
    monkeypatch.setenv("PAGER", f"{sys.executable} {tmp_path / 'pager.py'}")
    monkeypatch.setenv("PAGED_INTO", str(tmp_path / "paged.txt"))
    session = a_session(tmp_path / "s.jsonl")
    status, raw = on_terminal("show", session, "--no-pager")
    assert status == 0
    assert "answer 29" in raw.decode()
    assert waybook("show", session).stdout.count("answer") == 30  # into a pipe
    assert not (tmp_path / "paged.txt").exists()


def test_a_pager_that_cannot_start_leaves_the_output_on_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGER", str(tmp_path / "no-such-pager"))
    status, raw = on_terminal("show", a_session(tmp_path / "s.jsonl"))
    assert status == 0
    assert "answer 29" in raw.decode()


def test_quitting_the_pager_early_ends_show_quietly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", f"{sys.executable} -c pass")  # reads nothing and exits at once
    session = Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="big")
    for n in range(20):
        session.user(f"{n} " + "x" * 200_000)  # more than a pipe holds
    session.journal.close()
    status, raw = on_terminal("show", tmp_path / "s.jsonl")
    assert status == 0
    assert b"Traceback" not in raw
    assert b"BrokenPipe" not in raw
