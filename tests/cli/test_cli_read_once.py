"""Read once: `view`, `show`, `stats`, `export` and `verify` read a journal's file from the disk once,
whether it is given as a FILE or as `--store URL ID` of a directory store. One proven pass gives the
records and the chain report (`JsonlJournal.open_proven`, `waybook.stores.open_proven`); what the
command reads after it comes from the bytes that pass read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.reads import BytesRead
from waybook import JsonlJournal, Session, ToolOutcome
from waybook.model import ToolCallBlock
from waybook.stores import JournalFiles, copy_records, open_store

RECORDS = 3_000
SLACK = 1.1
"""At most this many times the file's size may be read (a header or a last record read twice)."""


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A coding session of a few thousand records as a file, and the same journal in a directory store:
    the file, the store's URL and the store's file of journal session (a copy keeps its id)."""
    home = tmp_path_factory.mktemp("read-once")
    path = home / "session.jsonl"
    session = Session.create(JsonlJournal(path, durability="none"), journal_id="session")
    for turn in range(RECORDS // 4):
        session.user(f"Step {turn}: what does module {turn % 40} do?")
        session.turn(
            [ToolCallBlock(call_id=f"c{turn}", name="read", arguments={"path": f"src/m{turn % 40}.py"})],
            [ToolOutcome(f"c{turn}", "def f(x):\n    return x * 2\n" * 20)],
            model="m",
        )
        session.assistant(f"Module {turn % 40} doubles its input.", model="m")
    session.journal.close()
    url = f"file:{home / 'store'}"
    with open_store(url) as store, JsonlJournal(path, readonly=True) as source:
        with store.create("session", header=False) as copy:
            copy_records(source.read(), copy)
        assert isinstance(store, JournalFiles)
        stored = store.file_of("session")
    return path, url, stored


COMMANDS = {
    "view": ["view", "{J}", "-o", "{OUT}.html"],
    "show": ["show", "{J}"],
    "stats": ["stats", "{J}"],
    "export openai": ["export", "{J}", "--format", "openai", "-o", "{OUT}.jsonl"],
    "export archival": ["export", "{J}", "--format", "archival", "-o", "{OUT}.jsonl"],
    "verify": ["verify", "{J}"],
}


@pytest.mark.parametrize("given", ["file", "store"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_read_command_reads_the_journal_file_once(
    journals: tuple[Path, str, Path], command: str, given: str, tmp_path: Path
) -> None:
    path, url, stored = journals
    journal, where = (str(path), []) if given == "file" else ("session", ["--store", url])
    args = [arg.replace("{J}", journal).replace("{OUT}", str(tmp_path / "out")) for arg in COMMANDS[command]]
    read_from = path if given == "file" else stored
    with BytesRead(read_from) as read:
        run = waybook(*args, *where)
    assert run.returncode == 0, run.stderr
    size = read_from.stat().st_size
    assert size <= read.total <= SLACK * size, f"{command} read {read.total / size:.2f}x the file"
