"""A CLI that fits 80 columns (`ls`, `log`, `tree`, `search`, `show --context`) and `verify --store URL`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.cli_runner import on_terminal, waybook
from tests.helpers.paths import ROOT, SHARED_FIXTURES
from waybook import Session
from waybook.journal import JsonlJournal, verify
from waybook.model import TextBlock, ThinkingBlock, ToolCallBlock
from waybook.stores import CATALOG_ID, ReservedJournalError, open_store

CLAUDE = SHARED_FIXTURES / "claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def shown(raw: bytes) -> list[str]:
    return ANSI.sub("", raw.decode()).replace("\r", "").splitlines()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Claude Code session with its two sub-agents, and a Pi session, imported into a directory store."""
    if not CLAUDE.is_file():
        pytest.skip("the shared fixtures are not on this machine")
    url = f"file:{tmp_path_factory.mktemp('real')}/store"
    assert waybook("import", "claude-code", CLAUDE, "--store", url, "-o", "cc").returncode == 0
    pi = SHARED_FIXTURES / "pi/before-compaction.jsonl"
    assert waybook("import", "pi", pi, "--store", url, "-o", "pi").returncode == 0
    return url


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        session = Session(store.create("s1", metadata={"user": "ada", "notes": "x" * 500}))
        session.user("where is the oat milk?")
        session.assistant("in the fridge")
        store.create("gone")
        store.purge("gone", reason="asked to forget")
        store.create("old")
        store.hide("old", reason="archived")
    return url


def test_ls_shows_id_records_last_activity_and_title_in_80_columns(real_store: str) -> None:
    status, raw = on_terminal("ls", "--store", real_store, columns=80)
    assert status == 0
    lines = shown(raw)
    assert all(len(line) <= 80 for line in lines), lines
    text = "\n".join(lines)
    for column in ("ID", "RECORDS", "LAST ACTIVITY", "TITLE"):
        assert column in text
    assert "cc.agent-a881341" in text  # sub-agents are named after the output (issue 33)  # never cut
    assert "Implement spotter-gqc" in text  # the first user message
    assert "claude_code" not in text  # no metadata without --long
    assert len(lines) <= 2 * 4 + 2  # header, then at most two lines a journal


def test_ls_into_a_pipe_is_one_bounded_line_a_journal(real_store: str) -> None:
    run = waybook("ls", "--store", real_store)
    lines = run.stdout.splitlines()
    assert len(lines) == 1 + 4
    assert all(len(line) <= 130 for line in lines), [len(line) for line in lines]


def test_ls_long_and_json_carry_the_metadata(real_store: str) -> None:
    long = waybook("ls", "--store", real_store, "--long")
    assert long.returncode == 0
    assert "claude_code" in long.stdout
    listed = json.loads(waybook("ls", "--store", real_store, "--json").stdout)["journals"]
    first = listed[0]
    assert first["id"] == "cc"
    assert first["title"] == "Implement spotter-gqc"
    assert first["records"] > 1000
    assert first["last_activity"].startswith("2026-02-11T")
    assert "claude_code" in first["metadata"]


def test_ls_names_an_untitled_journal_by_its_role(url: str) -> None:
    with open_store(url) as store:
        store.create("m1", role="working_memory")
    run = waybook("ls", "--store", url)
    assert "s1  " in run.stdout
    assert "where is the oat milk?" in run.stdout
    assert "(working_memory, untitled)" in run.stdout


def test_verify_a_store_without_ids_proves_every_journal_and_the_catalog(url: str) -> None:
    run = waybook("verify", "--store", url, "--json")
    assert run.returncode == 0, run.stderr
    reports = json.loads(run.stdout)
    assert [r["path"] for r in reports] == ["s1", "old", CATALOG_ID]  # hidden ones too, never purged
    catalog = reports[-1]
    assert catalog["ok"]
    assert catalog["records"] == 6  # header, three creations, the purge receipt, the hiding


def test_verify_the_catalog_by_its_id(url: str) -> None:
    run = waybook("verify", "--store", url, CATALOG_ID)
    assert run.returncode == 0, run.stderr
    assert "ok, 6 records" in run.stdout


def test_a_damaged_catalog_fails_verify_of_the_store(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        store.create("s1")
        store.create("s2")
    catalog = tmp_path / "store/catalog.jsonl"
    lines = catalog.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"s2", b"s9")
    catalog.write_bytes(b"".join(lines))
    run = waybook("verify", "--store", url)
    assert run.returncode == 1
    assert "catalog.jsonl: FAILED at seq 3" in run.stdout, (run.stdout, run.stderr)
    assert "no command repairs it" in run.stdout  # never the `waybook repair` hint of a user's journal
    catalog_report = json.loads(waybook("verify", "--store", url, "--json").stdout)[-1]
    assert catalog_report["path"] == CATALOG_ID
    assert catalog_report["bad_seq"] == 3
    assert not catalog_report["torn_tail"]


def test_verify_without_paths_or_store_is_a_usage_error() -> None:
    run = waybook("verify")
    assert run.returncode == 2
    assert "--store URL" in run.stderr


@pytest.mark.parametrize("kind", ["memory", "sqlite", "file"])
def test_every_store_shows_its_catalog_read_only(kind: str, tmp_path: Path) -> None:
    url = {"memory": "memory:", "sqlite": f"sqlite:{tmp_path}/s.db", "file": f"file:{tmp_path}/d"}[kind]
    with open_store(url) as store:
        store.create("a")
        store.purge("a", reason="test")
        with store.open_catalog() as catalog:  # type: ignore[attr-defined]
            assert verify(catalog).ok
            head = catalog.head()
            assert head.seq == 3
            with pytest.raises(ReservedJournalError):
                catalog.append([], expected=head)
        assert not store.exists("a")  # the store goes on after its catalog view is closed
        store.create("b")


@pytest.fixture
def tooled(tmp_path: Path) -> Path:
    """A session that thinks, calls a tool with long arguments, gets its result, and answers."""
    path = tmp_path / "tooled.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        session.user("count the rows of data.csv")
        thought = ThinkingBlock(thinking="the file is small; " * 20)
        arguments = {"path": "data.csv", "pad": "x" * 400}
        call = ToolCallBlock(call_id="call-7", name="count_rows", arguments=arguments)
        session.assistant([thought, call], stop_reason="tool_use")
        session.tool_result("call-7", "3 rows")
        session.assistant([ThinkingBlock(thinking="", redacted=True), TextBlock(text="It has 3 rows.")])
    return path


def test_show_context_shows_tool_calls_their_results_and_thinking_markers(tooled: Path) -> None:
    run = waybook("show", tooled, "--context")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert '-> count_rows({"pad": "xxx' in out  # the call, its arguments on one shortened line
    assert all(len(line) <= 130 for line in out.splitlines())
    assert "<- result of count_rows call call-7\n3 rows" in out  # the result, with the call it answers
    assert "[thinking: 380 characters]" in out
    assert "[thinking: redacted]" in out
    assert "(no text)" not in out
    assert "\n\n\n" not in out  # a thinking block is a marker, never blank lines


def test_show_context_of_a_langgraph_turn_shows_its_call(tmp_path: Path) -> None:
    pytest.importorskip("ormsgpack", reason="reading LangGraph needs ormsgpack (waybook[langgraph])")
    db = ROOT / "fixtures/langgraph/checkpoints.db"
    out = tmp_path / "lg.jsonl"
    assert waybook("import", "langgraph", db, "--thread", "thread-1", "-o", out).returncode == 0
    shown_context = waybook("show", out, "--context").stdout
    assert '-> count_rows({"path": "data.csv"})' in shown_context
    assert "<- result of count_rows call call_1\n3 rows" in shown_context
    assert "(no text)" not in shown_context


def test_log_fits_80_columns_with_ids_unique_in_the_journal(real_store: str) -> None:
    status, raw = on_terminal("log", "--store", real_store, "cc", "--limit", "200", columns=80)
    assert status == 0
    lines = shown(raw)
    assert len(lines) == 200
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    listed = json.loads(waybook("log", "--store", real_store, "cc", "--json").stdout.splitlines()[5])
    full = listed["id"]
    prefix = lines[5].split()[3]
    assert full.startswith(prefix)
    assert 8 <= len(prefix) < len(full)
    ran = waybook("show", "--store", real_store, "cc", "--leaf", prefix)  # the prefix names one node
    assert ran.returncode == 0, ran.stderr


def test_log_into_a_pipe_is_one_line_a_record_of_a_fixed_width(real_store: str) -> None:
    lines = waybook("log", "--store", real_store, "cc").stdout.splitlines()
    assert len(lines) > 1000
    assert all(len(line) <= 120 for line in lines), max(lines, key=len)


def test_tree_sums_a_run_up_by_its_last_message_within_the_width(real_store: str) -> None:
    status, raw = on_terminal("tree", "--store", real_store, "cc", columns=80)
    assert status == 0
    lines = shown(raw)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    run = next(line for line in lines if line.startswith("* "))
    assert "assistant: Yes" in run
    assert "turn_duration" not in "\n".join(lines)


def test_search_shows_whole_journal_ids_so_a_sub_agent_is_told_from_its_session(real_store: str) -> None:
    status, raw = on_terminal("search", "hook", "--store", real_store, "--limit", "20", columns=80)
    assert status == 0
    lines = [line for line in shown(raw) if "indexing the feed" not in line]
    assert all(len(line) <= 80 for line in lines if "258c7280" not in line), lines
    text = "\n".join(lines)
    assert "cc.agent-a881341" in text  # sub-agents are named after the output (issue 33)
    assert " cc  seq " in text


def test_long_commands_show_progress_on_a_terminal(real_store: str) -> None:
    _, raw = on_terminal("verify", "--store", real_store, stdout_too=False)
    assert b"verifying" in raw
    _, raw = on_terminal("search", "spotter", "--store", real_store, "--rebuild", stdout_too=False)
    assert b"indexing the feed" in raw
    _, raw = on_terminal("gc", "--store", real_store, "--grace", "0", stdout_too=False)
    assert b"collecting blobs" in raw
    piped = waybook("verify", "--store", real_store)
    assert "verifying" not in piped.stderr  # never into a pipe


def test_show_of_the_path_marks_thinking_and_shortens_calls_too(tooled: Path) -> None:
    out = waybook("show", tooled).stdout
    assert "[thinking: 380 characters]" in out
    assert '-> count_rows({"pad": "xxx' in out
    assert all(len(line) <= 210 for line in out.splitlines())
