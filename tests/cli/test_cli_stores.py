"""`--store URL JOURNAL_ID` wherever a command takes a journal PATH, and `waybook ls --store URL`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.pi import HEADER_V3, pi_lines, user
from waybook import Session
from waybook.stores import JournalFiles, open_store

PI_FIXTURE = Path("/work/shared/fixtures/pi/before-compaction.jsonl")


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url = f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        session = Session(store.create("s1", metadata={"user": "ada"}))
        question = session.user("hi")
        session.assistant("hello")
        session.branch_from(question.id, reason="retry")
        session.assistant("hello again")
        store.create("m1", role="working_memory", metadata={"user": "bob"})
        store.create("old")
        store.hide("old", reason="archived")
    return url


def test_verify_log_tree_and_show_read_a_journal_in_a_store(url: str) -> None:
    verify = waybook("verify", "--store", url, "s1", "--json")
    assert verify.returncode == 0, verify.stderr
    assert json.loads(verify.stdout)[0]["records"] == 5
    log = waybook("log", "--store", url, "s1", "--json")
    assert log.returncode == 0, log.stderr
    tree = waybook("tree", "--store", url, "s1")
    assert tree.returncode == 0, tree.stderr
    assert "hello again" in tree.stdout
    show = waybook("show", "--store", url, "s1")
    assert show.returncode == 0, show.stderr


def test_export_reads_the_stored_bytes(url: str, tmp_path: Path) -> None:
    out = tmp_path / "archive.jsonl"
    run = waybook("export", "--store", url, "s1", "--format", "archival", "-o", out)
    assert run.returncode == 0, run.stderr
    with open_store(url) as store:
        assert out.read_bytes() == b"".join(line + b"\n" for line in store.open("s1").read_lines())


def test_ls_lists_journals_in_creation_order_with_filters_and_pages(url: str) -> None:
    every = json.loads(waybook("ls", "--store", url, "--json", "--hidden").stdout)
    assert [j["id"] for j in every["journals"]] == ["s1", "m1", "old"]
    visible = json.loads(waybook("ls", "--store", url, "--json").stdout)
    assert [j["id"] for j in visible["journals"]] == ["s1", "m1"]
    by_meta = json.loads(waybook("ls", "--store", url, "--json", "--meta", "user=bob").stdout)
    assert [(j["id"], j["role"]) for j in by_meta["journals"]] == [("m1", "working_memory")]
    first = json.loads(waybook("ls", "--store", url, "--json", "--limit", "1").stdout)
    second = json.loads(
        waybook("ls", "--store", url, "--json", "--limit", "1", "--after", first["cursor"]).stdout
    )
    assert [j["id"] for j in first["journals"] + second["journals"]] == ["s1", "m1"]
    table = waybook("ls", "--store", url)
    assert table.returncode == 0
    assert "s1" in table.stdout
    assert "working_memory" in table.stdout


def test_an_unknown_journal_is_a_problem_and_a_bad_id_or_store_a_usage_error(
    url: str, tmp_path: Path
) -> None:
    unknown = waybook("log", "--store", url, "nobody")
    assert unknown.returncode == 1
    assert "no journal 'nobody'" in unknown.stderr
    bad = waybook("log", "--store", url, "../s1")
    assert bad.returncode == 2
    missing = waybook("ls", "--store", f"file:{tmp_path}/nowhere")
    assert missing.returncode == 2
    assert not (tmp_path / "nowhere").exists()
    assert waybook("ls", "--store", "ftp://x").returncode == 2


def test_a_purged_journal_is_reported_as_purged(url: str) -> None:
    with open_store(url) as store:
        store.purge("s1", reason="erasure")
    run = waybook("verify", "--store", url, "s1")
    assert run.returncode == 1
    assert "purged" in run.stderr


def test_repair_in_a_directory_store_quarantines_a_torn_tail(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        Session(store.create("s1")).user("hi")
    path = tmp_path / "store" / "journals" / "s1.jsonl"
    path.write_bytes(path.read_bytes() + b'{"seq":3,"to')
    assert waybook("verify", "--store", url, "s1").returncode == 1
    run = waybook("repair", "--store", url, "s1", "--yes")
    assert run.returncode == 0, run.stderr
    assert waybook("verify", "--store", url, "s1").returncode == 0


@pytest.mark.skipif(not PI_FIXTURE.is_file(), reason="the Pi fixture is not on this machine")
def test_import_into_a_store_keeps_every_digest(url: str, tmp_path: Path) -> None:
    """Under the session's own id, which the file's header names (under another, the header names that
    id: tests/cli/test_cli_header_names_journal.py)."""
    alone = tmp_path / "alone.jsonl"
    assert waybook("import", "pi", PI_FIXTURE, "-o", alone).returncode == 0
    session_id = json.loads(alone.read_bytes().splitlines()[0])["body"]["journal"]
    run = waybook("import", "pi", PI_FIXTURE, "--store", url, "-o", session_id)
    assert run.returncode == 0, run.stderr
    with open_store(url) as store:
        lines = list(store.open(session_id).read_lines())
    assert b"".join(line + b"\n" for line in lines) == alone.read_bytes()
    again = waybook("import", "pi", PI_FIXTURE, "--store", url, "-o", session_id)
    assert again.returncode == 0, again.stderr  # issue 47: the journal holds it all; nothing to append
    assert "is up to date" in again.stderr


def test_repair_in_a_database_store_has_nothing_to_do_but_names_unknown_journals(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        store.create("s1")
    ok = waybook("repair", "--store", url, "s1", "--yes")
    assert ok.returncode == 0
    assert "nothing to repair" in ok.stdout
    assert waybook("repair", "--store", url, "nobody", "--yes").returncode == 1


def test_verify_names_a_bad_id_as_a_usage_error_and_goes_on_to_the_next(url: str) -> None:
    run = waybook("verify", "--store", url, "../escape", "s1", "--json")
    assert run.returncode == 2
    assert [entry["records"] for entry in json.loads(run.stdout)] == [5]


def test_verify_in_a_store_finds_the_memory_journals_a_receipt_names_without_being_told(
    tmp_path: Path,
) -> None:
    from waybook.memory import Memory

    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("s1"))
        memory = Memory(
            store.create("agent-1", role="working_memory", metadata={"scope": "agent-1"}), scope="agent-1"
        )
        session.user("remember that I like tea")
        result = memory.execute(
            {"command": "create", "path": "/memories/prefs.md", "text": "tea"}, call_id="t1"
        )
        session.assistant("noted")
        session.tool_result("t1", "saved", tool_name="memory", details=result.receipt.as_details())
    run = waybook("verify", "--store", url, "s1")
    assert run.returncode == 0, run.stderr
    assert "receipts: 1 verified, 0 bad\n" in run.stdout


NOT_THERE = [["ls"], ["verify"], ["show", "s1"], ["view", "s1", "-o", "page.html"], ["serve", "--port", "0"]]


@pytest.mark.parametrize("command", NOT_THERE)
def test_a_store_that_is_not_there_is_a_usage_error_naming_the_option_and_nothing_is_created(
    command: list[str], tmp_path: Path
) -> None:
    for url in (f"file:{tmp_path}/nowhere", f"sqlite:{tmp_path}/nowhere.db"):
        args = [arg if arg != "page.html" else str(tmp_path / arg) for arg in command]
        run = waybook(*args, "--store", url)
        assert run.returncode == 2, run.stderr
        assert run.stderr.startswith(f"waybook: --store {url}: no "), run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["show"], ["stats"], ["log"]])
def test_a_torn_tail_in_a_directory_store_is_reported_as_for_a_file(
    command: list[str], tmp_path: Path
) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        Session(store.create("s1")).user("hi")
        assert isinstance(store, JournalFiles)
        path = store.file_of("s1")
    path.write_bytes(path.read_bytes() + b'{"seq":3,"to')
    run = waybook(*command, "--store", url, "s1")
    assert run.returncode == 1, run.stderr
    assert "torn tail at byte" in run.stderr


FOREIGN_DB_COMMANDS = [["ls"], ["search", "hello"], ["import", "pi", "session.jsonl", "--store"]]


@pytest.mark.parametrize("command", FOREIGN_DB_COMMANDS)
def test_another_programs_sqlite_database_is_refused_once_named_and_left_as_it_was(
    command: list[str], tmp_path: Path
) -> None:
    (tmp_path / "session.jsonl").write_text(pi_lines(HEADER_V3, user("u1", None, "hello")))
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    before = path.read_bytes()
    url = f"sqlite:{path}"
    args = [*command, url, "s1"] if command[-1] == "--store" else [*command, "--store", url]
    run = waybook(*args, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stderr.count(f"sqlite:{path}") == 1, run.stderr
    assert "not a waybook store (it holds the tables invoices)" in run.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db", "session.jsonl"]
