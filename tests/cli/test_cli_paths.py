"""Issue 43 (CLI): every path argument is checked, and a wrong one is a typed one-line message.

`waybook export / --format openai -o out.jsonl` gave a traceback; `verify` and `stats` of a 0-byte file
exited 0 though docs/cli.md says a file that is not a journal exits 1. Here every command that takes a
path gets the paths a hostile or careless caller gives (a folder, nothing, a FIFO, a device, a path
through a file, a name too long, bytes that are not UTF-8, an empty file) and answers each with exit 1
or 2 and a message naming it, never a traceback, never a wait.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.blocking import finishes
from tests.helpers.cli_runner import Ran, waybook
from tests.helpers.paths import ROOT
from waybook import JsonlJournal, Session
from waybook.memory import Create, Memory
from waybook.model import JournalError
from waybook.stores import open_store

READ_COMMANDS = [
    ["verify", "{}"],
    ["stats", "{}"],
    ["show", "{}"],
    ["log", "{}"],
    ["tree", "{}"],
    ["view", "{}", "-o", "page.html"],
    ["export", "{}", "--format", "openai", "-o", "out.jsonl"],
    ["export", "{}", "--format", "archival", "-o", "out.jsonl"],
    ["repair", "{}"],
    ["fork", "{}", "n", "-o", "fork.jsonl"],
    ["label", "{}", "n", "chosen"],
    ["otel", "send", "{}", "--dry-run"],
    ["memory", "show", "{}"],
    ["memory", "export-git", "{}", "git-out"],
]
"""Commands that read a journal file named by PATH."""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A folder holding a session journal, a memory journal, an empty file, a text file and a FIFO."""
    session = Session.create(JsonlJournal(tmp_path / "good.jsonl"), journal_id="good")
    session.user("hello")
    session.assistant("hi")
    session.journal.close()
    with JsonlJournal(tmp_path / "memory.jsonl") as journal:
        Memory(journal, scope="agent").execute(Create("/memories/a.md", "a note"))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("hello\n")
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "folder").mkdir()
    return tmp_path


def run_in(here: Path, command: list[str], value: str) -> Ran:
    args = [value if arg == "{}" else arg for arg in command]
    ran: Ran = finishes(lambda: waybook(*args, cwd=here))
    assert "Traceback" not in ran.stderr
    return ran


def test_export_of_a_folder_is_a_usage_error_not_a_traceback(here: Path) -> None:
    for folder in ("/", ".", "", "folder"):
        ran = run_in(here, ["export", "{}", "--format", "openai", "-o", "out.jsonl"], folder)
        assert ran.returncode == 2, ran.stderr
        assert "is a directory, not a journal file" in ran.stderr
    assert not (here / "out.jsonl").exists()


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_zero_byte_file_is_not_a_journal_exit_1(here: Path, command: list[str]) -> None:
    ran = run_in(here, command, "empty.jsonl")
    assert ran.returncode == 1, ran.stderr
    assert "empty.jsonl: not a waybook journal" in ran.stderr
    assert "the file is empty" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1
    assert (here / "empty.jsonl").read_bytes() == b""  # repair and label touched nothing
    assert not (here / "page.html").exists()
    assert not (here / "out.jsonl").exists()


def test_verify_json_of_a_zero_byte_file_says_it_is_no_journal(here: Path) -> None:
    ran = waybook("verify", here / "empty.jsonl", "--json")
    assert ran.returncode == 1
    (entry,) = json.loads(ran.stdout)
    assert entry["ok"] is False
    assert entry["journal"] is False
    assert entry["reason"] == "the file is empty"


def test_labelling_a_file_that_is_not_a_journal_appends_nothing(here: Path) -> None:
    ran = run_in(here, ["label", "{}", "n", "chosen"], "notes.txt")
    assert ran.returncode == 1
    assert "not a waybook journal" in ran.stderr
    assert (here / "notes.txt").read_text() == "hello\n"


BAD_PATHS = {
    "a folder": ("folder", "is a directory, not a journal file"),
    "the root": ("/", "is a directory, not a journal file"),
    "nothing": ("", "is a directory, not a journal file"),
    "a FIFO": ("fifo.jsonl", "is a FIFO, not a journal file"),
    "a device": ("/dev/null", "is a device, not a journal file"),
    "missing": ("missing.jsonl", "no such journal file"),
    "through a file": ("good.jsonl/x", "cannot be read (Not a directory)"),
    "too long": ("x" * 5000, "cannot be read (File name too long)"),
}


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("case", sorted(BAD_PATHS))
def test_every_read_command_names_a_bad_path_in_one_line(here: Path, command: list[str], case: str) -> None:
    value, message = BAD_PATHS[case]
    ran = run_in(here, command, value)
    assert ran.returncode == 2, ran.stderr
    assert message in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1


OUTPUTS = [
    ["view", "good.jsonl", "-o", "{}"],
    ["export", "good.jsonl", "--format", "openai", "-o", "{}"],
    ["export", "good.jsonl", "--format", "hf", "-o", "{}"],
    ["fork", "good.jsonl", "n", "-o", "{}"],
    ["import", "pi", "notes.txt", "-o", "{}"],
]
BAD_OUTPUTS = ["/", ".", "", "folder", "missing/out.x", "good.jsonl/x", "y" * 5000]


@pytest.mark.parametrize("command", OUTPUTS, ids=lambda c: " ".join(c[:3]))
@pytest.mark.parametrize("value", BAD_OUTPUTS, ids=lambda v: v[:20] or "empty")
def test_an_output_that_cannot_be_written_is_a_typed_error(
    here: Path, command: list[str], value: str
) -> None:
    ran = run_in(here, command, value)
    assert ran.returncode in (1, 2), ran.stderr
    assert ran.stderr.startswith("waybook: ")
    assert len(ran.stderr.strip().splitlines()) == 1


def test_serve_of_a_relative_store_url_that_is_not_there_creates_nothing(tmp_path: Path) -> None:
    ran = waybook("serve", "--store", "file:nostore", "--port", "0", cwd=tmp_path)
    assert ran.returncode == 2
    assert "--store file:nostore: no directory store there" in ran.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "command", [c for c in READ_COMMANDS if c[0] != "otel"], ids=lambda c: " ".join(c[:2])
)
def test_a_path_that_is_not_utf8_is_named_with_escapes(here: Path, command: list[str]) -> None:
    """In a real process (stderr escapes what is not UTF-8, as Python's does): the name shows escaped."""
    name = os.fsdecode(b"\xff\xfe.jsonl")
    args = [name if arg == "{}" else arg for arg in command]
    ran = subprocess.run(
        [sys.executable, "-m", "waybook", *args],
        cwd=here,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 2
    assert ran.stderr == b"waybook: \\udcff\\udcfe.jsonl: no such journal file\n"


PATTERN_COMMANDS = [
    ["export", "good.jsonl", "--format", "openai", "--redact", "-o", "out.jsonl", "--redact-patterns", "{}"],
    ["otel", "send", "good.jsonl", "--dry-run", "--content", "full", "--redact-patterns", "{}"],
]
BAD_PATTERN_FILES = {
    "a FIFO": ("fifo.jsonl", "is not a regular file (a FIFO or a device); give a text file"),
    "an endless device": ("/dev/zero", "is not a regular file (a FIFO or a device); give a text file"),
    "a folder": ("folder", "is a directory; give a text file"),
    "the root": ("/", "is a directory; give a text file"),
    "missing": ("missing.txt", "cannot read it (No such file or directory)"),
    "not text": ("bytes.bin", "is not UTF-8 text (byte 0)"),
    "too large": ("big.txt", "is larger than 1048576 bytes; give a smaller text file"),
}


@pytest.mark.parametrize("command", PATTERN_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("case", sorted(BAD_PATTERN_FILES))
def test_a_patterns_file_that_is_not_a_text_file_is_refused_without_waiting(
    here: Path, command: list[str], case: str
) -> None:
    (here / "bytes.bin").write_bytes(b"\xff\xfe")
    (here / "big.txt").write_bytes(b"x\n" * (1 << 20))
    value, message = BAD_PATTERN_FILES[case]
    ran = run_in(here, command, value)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr == f"waybook: --redact-patterns {value}: {message}\n"
    assert not (here / "out.jsonl").exists()


MEMORY_WRITE_COMMANDS = [
    ["memory", "sync", "{}"],
    ["memory", "import-git", "git-in", "{}"],
]
"""Commands that append to a memory journal file named by MEMORY.jsonl."""


@pytest.mark.parametrize("command", MEMORY_WRITE_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("case", ["a folder", "the root", "a FIFO", "a device"])
def test_a_memory_journal_path_that_is_not_a_file_says_what_it_is(
    here: Path, command: list[str], case: str
) -> None:
    assert waybook("memory", "export-git", "memory.jsonl", "git-in", cwd=here).returncode == 0
    value, message = BAD_PATHS[case]
    ran = run_in(here, command, value)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr == f"waybook: {value}: {message}\n"


@pytest.mark.parametrize("command", MEMORY_WRITE_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("name", ["empty.jsonl", "notes.txt"])
def test_a_memory_command_appends_nothing_to_a_file_that_is_not_a_memory_journal(
    here: Path, command: list[str], name: str
) -> None:
    assert waybook("memory", "export-git", "memory.jsonl", "git-in", cwd=here).returncode == 0
    before = (here / name).read_bytes()
    ran = run_in(here, command, name)
    assert ran.returncode == 1, ran.stderr
    assert f"{name} is not a working-memory journal" in ran.stderr
    assert (here / name).read_bytes() == before


@pytest.mark.parametrize("hostile", ["../outside", "/tmp/abs", ".."])
def test_tree_never_follows_a_subagent_link_out_of_the_folder(tmp_path: Path, hostile: str) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    with JsonlJournal(tmp_path / "outside.jsonl") as outside:  # a journal out there, which tree never opens
        Session.create(outside).user("not yours")
    with JsonlJournal(folder / "s.jsonl") as journal:
        session = Session.create(journal)
        asked = session.user("research this")
        try:
            session.link_subagent(hostile, at=asked.id, call_id="task-1")
        except JournalError:
            pytest.skip(f"the writer itself refuses the link id {hostile!r}")
    ran = waybook("tree", folder / "s.jsonl", "--json")
    assert ran.returncode == 0, ran.stderr
    (link,) = json.loads(ran.stdout)["subagents"]
    assert link["file"] is None


def test_tree_of_a_store_journal_names_a_hostile_subagent_link_as_not_in_the_store(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        session = Session(store.create("parent"))
        asked = session.user("research this")
        session.link_subagent("../outside", at=asked.id, call_id="task-1")
    ran = waybook("tree", "--store", url, "parent", "--json")
    assert ran.returncode == 0, ran.stderr
    (link,) = json.loads(ran.stdout)["subagents"]
    assert (link["journal"], link["file"]) == ("../outside", None)
