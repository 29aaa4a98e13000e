"""Issue 14: the CLI behaves like a good Unix tool: usage errors, id prefixes, pipes, terminals."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_cli import _long_journal
from tests.formats.test_pi_fidelity import HOSTILE
from tests.helpers.cli_runner import installed, installed_env, waybook
from tests.helpers.cli_runner import on_terminal as run_on_terminal
from waybook import JsonlJournal, Session
from waybook.memory import Memory
from waybook.model import ToolCallBlock

HOSTILE_TEXT = "title\x1b]0;pwned\x07 clear\x1b[2J bell\x07 rtl\u202eevil\u202c csi\x9b31m end"


def ided_session(path: Path, *, text: str = "hi") -> Path:
    """A branching session with known ids: abc1.. on one branch, abd1.. on the other."""
    ids = iter(["h0", "abc100", "abc200", "abc300", "mv1", "abd100", "cmp1", "abd200"])
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="ids", ids=lambda: next(ids))
        question = session.user(text)
        session.assistant(
            [ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": text})], stop_reason="tool_use"
        )
        session.tool_result("c1", text)
        session.branch_from(question.id, reason=f"retry {text}")
        session.assistant(text)
        session.compact("the summary of it all", first_kept=question.id)
        session.assistant("after compaction")
    return path


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    return ided_session(tmp_path / "s.jsonl")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["log", "{J}", "--kind", "assistants"], "unknown kind"),
        (["show", "{J}", "--at", "99"], "has only 8 records"),
        (["tree", "{J}", "--at", "99"], "has only 8 records"),
        (["export", "{J}", "--format", "openai", "--at", "99", "-o", "-"], "has only 8 records"),
        (["show", "{J}", "--leaf", "zzz"], "not a node"),
        (["diff", "{J}", "--leaf", "abc1", "--leaf", "zzz"], "not a node"),
        (["export", "{J}", "--format", "openai", "--branches", "zzz", "-o", "-"], "not a node"),
        (
            ["show", "{J}", "--leaf", "ab"],
            "ambiguous: 5 nodes start with it (abc100, abc200, abc300, abd100, abd200)",
        ),
    ],
)
def test_bad_values_are_usage_errors_with_a_message(journal: Path, args: list[str], said: str) -> None:
    run = waybook(*[str(journal) if a == "{J}" else a for a in args])
    assert run.returncode == 2
    assert said in run.stderr
    assert run.stdout == ""


def test_unique_id_prefixes_are_accepted_wherever_an_id_is(journal: Path) -> None:
    shown = json.loads(waybook("show", journal, "--leaf", "abc3", "--json").stdout)
    assert shown["leaf"] == "abc300"
    diff = json.loads(waybook("diff", journal, "--leaf", "abc3", "--leaf", "abd2", "--json").stdout)
    assert [b["leaf"] for b in diff["branches"]] == ["abc300", "abd200"]
    run = waybook("export", journal, "--format", "openai", "--branches", "abc3", "--metadata", "-o", "-")
    assert json.loads(run.stdout)["metadata"]["leaf"] == "abc300"


def help_examples() -> list[tuple[str, str]]:
    run = waybook("--help")
    commands = re.findall(r"^    (\w+)", run.stdout.split("commands:")[1], flags=re.M)
    found = []
    for command in commands:
        text = waybook(command, "--help").stdout
        example = text.split("Example: ")[1].strip()  # the first, where a command shows several
        found.append((command, " ".join(example.split())))
    return found


def test_every_help_example_works_as_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pi = home / ".pi" / "agent" / "sessions"
    pi.mkdir(parents=True)
    (pi / "x.jsonl").write_text(
        json.dumps(
            {"type": "session", "version": 3, "id": "x", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
        )
        + "\n"
    )
    work = tmp_path / "work"
    (work / "sessions").mkdir(parents=True)
    ids = iter(["h", "a1b2c3d4", "x1", "x2", "m1", "c3d4e5"])
    with JsonlJournal(work / "session.jsonl") as j:
        s = Session.create(j, journal_id="ex", ids=lambda: next(ids))
        ask = s.user("hi")
        s.assistant("one")
        s.assistant("two")
        s.branch_from(ask.id, reason="retry")
        s.assistant("three")
    ided_session(work / "sessions" / "a.jsonl")
    with JsonlJournal(work / "agent.memory.jsonl") as m:
        assert Memory(m, scope="agent").execute(
            {"command": "create", "path": "/memories/notes.md", "text": "x"}
        )
    # A store's example (`waybook ls --store file:./sessions`) needs a store there: its own tests run it.
    examples = [(c, e) for c, e in help_examples() if "--store" not in e]
    assert len(examples) >= 10
    program = installed()  # in a shell, as written: globs and ~ are the shell's
    for command, example in examples:
        if command == "demo":
            example = example.split(" && ")[0]
        line = example.replace("waybook ", f"{program} ", 1)
        if command == "repair":
            line = line.replace(" --yes", "")  # nothing to repair: it says so
        if "--endpoint" in line:
            line += " --dry-run"  # no trace backend listens here: tests/cli/test_cli_otel.py sends for real
        run = subprocess.run(
            line,
            shell=True,
            cwd=work,
            env=installed_env(HOME=str(home)),
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, (example, run.stderr)


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    _long_journal(path, 3_000)
    program = installed()
    for command in (
        ["log"],
        ["show"],
        ["tree"],
        ["log", "--json"],
        ["export", "--format", "archival", "-o", "-"],
    ):
        process = subprocess.Popen(
            [program, command[0], str(path), *command[1:]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=installed_env(),
        )
        assert process.stdout is not None
        process.stdout.readline()
        process.stdout.close()
        _, err = process.communicate()
        assert process.returncode in (0, 141), (command, err)
        assert err == b"", (command, err)


def test_piped_output_is_never_wrapped(tmp_path: Path) -> None:
    long = "word " * 60
    path = ided_session(tmp_path / "s.jsonl", text=long.strip())
    for command in (["show"], ["show", "--context"], ["tree"], ["diff", "--leaf", "abc3", "--leaf", "abd2"]):
        out = waybook(command[0], path, *command[1:]).stdout
        assert any(len(line) > 200 for line in out.splitlines()) or "…" in out, command


def on_terminal(*args: str | Path, columns: int = 80, stdout_too: bool = True, status: int = 0) -> bytes:
    """What a terminal would receive (stderr, and stdout unless `stdout_too` is False)."""
    code, seen = run_on_terminal(*args, columns=columns, stdout_too=stdout_too)
    assert code == status, seen
    return seen


def test_control_characters_from_a_session_never_reach_a_terminal_raw(tmp_path: Path) -> None:
    path = ided_session(tmp_path / "s.jsonl", text=HOSTILE_TEXT)
    memory = tmp_path / "m.jsonl"
    with JsonlJournal(memory) as m:
        Memory(m, scope="agent").execute(
            {"command": "create", "path": "/memories/x.md", "text": HOSTILE_TEXT}
        )
    for args in (["show", path], ["show", path, "--context"], ["show", path, "--json"], ["log", path],
        ["tree", path], ["diff", path, "--leaf", "abc3", "--leaf", "abd2"], ["memory", memory],
        ["memory", memory, "--cat", "/memories/x.md"], ["log", path, "--json"]):  # fmt: skip
        seen = on_terminal(*args)
        for raw in (b"\x1b]0;", b"\x1b[2J", b"\x07", "\u202e".encode(), "\x9b".encode()):
            assert raw not in seen, (args, raw, seen[:300])
    assert b"\\x1b]0;pwned" in on_terminal("show", path)


def test_terminal_lines_are_cut_never_cut_and_wrapped(journal: Path) -> None:
    seen = on_terminal("tree", journal, columns=40).decode()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", seen).replace("\r", "")
    lines = [line for line in plain.splitlines() if line]
    assert all(len(line) <= 40 for line in lines)
    assert any(line.endswith("…") for line in lines)


def test_show_prints_compaction_summaries(journal: Path) -> None:
    out = waybook("show", journal).stdout
    assert "summary: the summary of it all" in out


def test_memory_prints_a_files_text_at_any_seq(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with JsonlJournal(path) as m:
        memory = Memory(m, scope="agent")
        memory.execute({"command": "create", "path": "/memories/n.md", "text": "first\n"})
        memory.execute(
            {"command": "str_replace", "path": "/memories/n.md", "old_text": "first", "new_text": "second"}
        )
    assert waybook("memory", path, "--cat", "/memories/n.md", "--at", "2").stdout == "first\n"
    assert waybook("memory", path, "--cat", "/memories/n.md").stdout == "second\n"
    gone = waybook("memory", path, "--cat", "/memories/n.md", "--at", "1")
    assert gone.returncode == 2
    assert "no such memory file" in gone.stderr


def test_counts_read_right(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    with JsonlJournal(path) as j:
        Session.create(j, journal_id="one")
    assert "ok, 1 record," in waybook("verify", path).stdout
    out = waybook("export", path, "--format", "archival", "-o", tmp_path / "a.jsonl")
    assert "wrote 1 record to" in out.stderr


@pytest.mark.parametrize("name", HOSTILE)
def test_import_of_a_hostile_pi_file_is_a_one_line_error(tmp_path: Path, name: str) -> None:
    source = tmp_path / "hostile.jsonl"
    source.write_bytes(HOSTILE[name])
    run = waybook("import", "pi", source, "-o", tmp_path / "out.jsonl")
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_long_show_shows_progress_for_every_phase(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    _long_journal(path, 25_000)
    seen = on_terminal("show", path, stdout_too=False)
    assert b"replaying" in seen
    assert b"writing" in seen
