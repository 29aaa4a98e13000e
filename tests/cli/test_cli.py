"""The `waybook` command, run as a user would: exit codes, stdout vs stderr, --json.

Most tests run the command in-process (tests.helpers.cli_runner.waybook); the installed console script and
`python -m waybook` are run as processes too (smoke tests, and where a terminal is needed).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli_runner import installed, installed_env, run_installed, waybook
from waybook import JsonlJournal, Session


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="cli")
        question = session.user("hi")
        session.assistant("hello")
        session.branch_from(question.id, reason="retry")
        session.assistant("hello again")
    return path


def test_version_prints_the_version() -> None:
    from waybook import __version__

    run = waybook("--version")
    assert run.returncode == 0
    assert run.stdout.strip() == f"waybook {__version__}"


def test_the_installed_console_script_is_the_same_command(tmp_path: Path) -> None:
    from waybook import __version__

    run = run_installed("--version")
    assert run.returncode == 0
    assert run.stdout.strip() == f"waybook {__version__}"
    missing = run_installed("verify", tmp_path / "nope.jsonl")
    assert missing.returncode == 2
    assert missing.stderr == f"waybook: {tmp_path / 'nope.jsonl'}: no such journal file\n"


def test_no_command_is_a_usage_error_on_stderr() -> None:
    run = waybook()
    assert run.returncode == 2
    assert run.stdout == ""
    assert "usage:" in run.stderr


def test_verify_a_good_journal_exits_0(session_file: Path) -> None:
    run = waybook("verify", session_file)
    assert run.returncode == 0
    assert "ok, 5 records" in run.stdout
    assert run.stderr == ""


def test_verify_a_torn_tail_exits_1_and_says_what_repair_would_remove(session_file: Path) -> None:
    size = session_file.stat().st_size
    session_file.write_bytes(session_file.read_bytes()[:-20])
    run = waybook("verify", session_file, "--json")
    assert run.returncode == 1
    (report,) = json.loads(run.stdout)
    assert report["ok"] is False
    assert report["torn_tail"] is True
    assert report["bad_seq"] == 5
    assert 0 < report["offset"] < size
    human = waybook("verify", session_file)
    assert "waybook repair" in human.stdout


def test_verify_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    run = waybook("verify", tmp_path / "nope.jsonl")
    assert run.returncode == 2
    assert "no such journal" in run.stderr


COMMANDS = ["demo", "verify", "tree", "log", "show", "diff", "export", "import", "repair", "memory"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(command: str) -> None:
    run = waybook(command, "--help")
    assert run.returncode == 0
    assert "Example: waybook" in run.stdout


def test_demo_writes_a_verified_session_and_shows_its_tree(tmp_path: Path) -> None:
    run = waybook("demo", tmp_path / "d")
    assert run.returncode == 0, run.stderr
    assert "ok, 20 records" in run.stdout
    assert "<- leaf" in run.stdout
    assert "rejected: the fix changed a public signature" in run.stdout
    segments = [line for line in run.stdout.splitlines() if " entries)" in line]
    assert len(segments) == 3
    assert all(": " in line for line in segments), "a piped tree is never wrapped (issue 14)"
    again = waybook("demo", tmp_path / "d")
    assert again.returncode == 2
    assert "already exists" in again.stderr


def test_demo_without_a_dir_makes_a_new_folder_in_the_current_directory(tmp_path: Path) -> None:
    for _ in range(2):
        assert waybook("demo", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["waybook-demo", "waybook-demo-2"]


def test_tree_json_lists_nodes_branches_and_moves(session_file: Path) -> None:
    run = waybook("tree", session_file, "--json")
    tree = json.loads(run.stdout)
    assert sorted(tree) == ["branches", "digest", "leaf", "moves", "nodes", "seq", "subagents"]
    assert [b["active"] for b in tree["branches"]] == [False, True]
    (move,) = tree["moves"]
    assert move["reason"] == "retry"
    then = json.loads(waybook("tree", session_file, "--json", "--at", "3").stdout)
    assert then["seq"] == 3
    assert then["moves"] == []


def test_log_filters_by_kind_and_range(session_file: Path) -> None:
    run = waybook("log", session_file, "--kind", "assistant")
    assert len(run.stdout.splitlines()) == 2
    rows = [
        json.loads(x)
        for x in waybook("log", session_file, "--after", "1", "--limit", "2", "--json").stdout.splitlines()
    ]
    assert [r["seq"] for r in rows] == [2, 3]
    assert rows[0]["body"]["kind"] == "waybook.user/2"


def test_show_prints_the_path_or_the_context(session_file: Path) -> None:
    path = json.loads(waybook("show", session_file, "--json").stdout)
    assert [r["kind"] for r in path["records"]] == ["waybook.user/2", "waybook.assistant/1"]
    context = json.loads(waybook("show", session_file, "--context", "--json").stdout)
    assert [m["role"] for m in context] == ["user", "assistant"]
    assert context[1]["content"] == [{"type": "text", "text": "hello again"}]
    bad = waybook("show", session_file, "--leaf", "nope")
    assert bad.returncode == 2
    assert "not a node" in bad.stderr


def test_diff_names_the_fork_and_each_side(session_file: Path) -> None:
    tree = json.loads(waybook("tree", session_file, "--json").stdout)
    first, second = (b["end"] for b in tree["branches"])
    diff = json.loads(waybook("diff", session_file, "--leaf", first, "--leaf", second, "--json").stdout)
    assert diff["shared"] == 1
    assert [len(b["after_fork"]) for b in diff["branches"]] == [1, 1]
    assert waybook("diff", session_file, "--leaf", first).returncode == 2


def test_export_writes_rows_and_reports_on_stderr(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    run = waybook("export", session_file, "--format", "openai", "--branches", "all", "-o", out)
    assert run.returncode == 0
    assert run.stdout == ""
    assert "wrote 2 trajectories" in run.stderr
    assert len(out.read_text().splitlines()) == 2
    again = tmp_path / "again.jsonl"
    waybook("export", session_file, "--format", "openai", "--branches", "all", "-o", again)
    assert again.read_bytes() == out.read_bytes()
    stdout = waybook("export", session_file, "--format", "sharegpt", "-o", "-")
    assert json.loads(stdout.stdout)["conversations"][0]["from"] == "human"
    assert waybook("export", session_file, "--format", "archival", "--redact", "-o", out).returncode == 2


def test_archival_export_is_the_journal_itself(session_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "archive.jsonl"
    assert waybook("export", session_file, "--format", "archival", "-o", out).returncode == 0
    assert out.read_bytes() == session_file.read_bytes()


def test_import_pi_then_export_pi_round_trips(tmp_path: Path) -> None:
    pi = tmp_path / "pi.jsonl"
    pi.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
        '{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi"}}\n'
    )
    out = tmp_path / "imported.jsonl"
    run = waybook("import", "pi", pi, "-o", out)
    assert run.returncode == 0, run.stderr
    assert "imported 2 records from a Pi v3 session" in run.stderr
    assert waybook("verify", out).returncode == 0
    assert waybook("import", "pi", pi, "-o", out).returncode == 2
    back = tmp_path / "back.jsonl"
    assert waybook("export", out, "--format", "pi", "-o", back).returncode == 0
    assert json.loads(back.read_text().splitlines()[1])["message"]["content"] == "hi", (
        "exactly as Pi wrote it"
    )


def test_import_refuses_bad_lines_unless_lenient(tmp_path: Path) -> None:
    pi = tmp_path / "pi.jsonl"
    pi.write_text('{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z"}\nnot json\n')
    refused = waybook("import", "pi", pi, "-o", tmp_path / "a.jsonl")
    assert refused.returncode == 1
    assert "line 2" in refused.stderr
    assert not (tmp_path / "a.jsonl").exists()
    lenient = waybook("import", "pi", pi, "-o", tmp_path / "b.jsonl", "--lenient")
    assert lenient.returncode == 0
    assert "skipped 1 unparseable line (--lenient)" in lenient.stderr


def test_repair_changes_nothing_without_confirmation(session_file: Path) -> None:
    session_file.write_bytes(session_file.read_bytes()[:-10])
    torn = session_file.read_bytes()
    listing = sorted(session_file.parent.iterdir())
    refused = waybook("repair", session_file)
    assert refused.returncode == 1
    assert "repair would move" in refused.stdout
    assert session_file.read_bytes() == torn
    assert sorted(session_file.parent.iterdir()) == listing, "issue 12: no lock or other file created"
    done = waybook("repair", session_file, "--yes", "--json")
    assert done.returncode == 0
    receipt = json.loads(done.stdout.splitlines()[-1])
    assert Path(receipt["quarantine_path"]).is_file()
    assert waybook("verify", session_file).returncode == 0
    assert waybook("repair", session_file).returncode == 0


def test_memory_shows_files_at_a_seq_and_a_files_history(tmp_path: Path) -> None:
    assert waybook("demo", tmp_path / "d").returncode == 0
    journal = tmp_path / "d" / "memory.jsonl"
    listing = json.loads(waybook("memory", journal, "--json").stdout)
    assert listing["scope"] == "demo-agent"
    assert [f["path"] for f in listing["files"]] == ["/memories/payments.md"]
    assert json.loads(waybook("memory", journal, "--json", "--at", "1").stdout)["files"] == []
    (created,) = json.loads(waybook("memory", journal, "--history", "/memories/payments.md", "--json").stdout)
    assert (created["event"], created["call_id"]) == ("created", "call-5")
    assert sorted(created) == [
        "at",
        "call_id",
        "command",
        "digest",
        "event",
        "id",
        "other_path",
        "prior",
        "seq",
    ]  # a revision's fields, `record_id` named `id`: what `--history --json` has always printed
    session = tmp_path / "d" / "session.jsonl"
    receipts = [
        json.loads(x)["body"]
        for x in waybook("log", session, "--kind", "tool_result", "--json").stdout.splitlines()
    ]
    assert receipts[-1]["details"]["memory_receipt"]["seq"] == listing["seq"]
    not_memory = waybook("memory", session)
    assert not_memory.returncode == 2
    assert "not a working-memory journal" in not_memory.stderr


def test_a_corrupt_journal_is_a_problem_not_a_crash(session_file: Path) -> None:
    data = bytearray(session_file.read_bytes())
    data[200] ^= 0x01
    session_file.write_bytes(bytes(data))
    for command in (["tree"], ["log"], ["show"]):
        run = waybook(*command, session_file)
        assert run.returncode == 1
        assert "corrupt" in run.stderr
        assert "Traceback" not in run.stderr


def test_show_says_which_canonical_memory_the_agent_read_at_each_turn(tmp_path: Path) -> None:
    from waybook.journal import InMemoryJournal
    from waybook.journal._roles.memory_text import content_digest
    from waybook.memory import Route, create_authority
    from waybook.model import MemoryWrite, NewRecord

    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal)
        session.user("before any pin move")
        canonical = InMemoryJournal("c")
        authority = create_authority(
            working=InMemoryJournal("w"),
            canonical=canonical,
            routes=[Route("r", frozenset({"p"}))],
            actor="h",
            session=journal,
        )
        body = MemoryWrite(path="/memories/a.md", text="t", digest=content_digest("t"))
        canonical.append(
            [NewRecord(id="x", at="2026-12-01T09:00:00.000Z", body=body)], expected=canonical.head()
        )
        receipt = authority.host.advance_canonical(authority.agent.query().head, canonical.head())  # type: ignore[attr-defined]
        session.sync()
        session.assistant("after the pin moved")
    records = json.loads(waybook("show", path, "--json").stdout)["records"]
    assert records[0]["canonical_pin"] is None
    assert records[1]["canonical_pin"]["seq"] == receipt.new.seq
    assert records[1]["canonical_pin"]["receipt"] == receipt.receipt_sha256
    assert f"pinned at seq {receipt.new.seq}" in waybook("show", path).stdout


def _long_journal(path: Path, records: int) -> None:
    from waybook.codecs._wire import seal
    from waybook.model import NewRecord, UserMessage, text
    from waybook.model._head import GENESIS_DIGEST
    from waybook.model._records import Header

    prev, parent = GENESIS_DIGEST, None
    with path.open("wb") as out:
        for seq in range(1, records + 1):
            body = (
                Header(journal="long", creator="tests")
                if seq == 1
                else UserMessage(parent=parent, content=text(f"turn {seq}"))
            )
            record, line = seal(seq, NewRecord(id=f"n{seq}", at="2026-12-01T09:00:00.000Z", body=body), prev)
            out.write(line + b"\n")
            prev, parent = record.digest, (record.id if seq > 1 else None)


def test_long_replays_show_progress_only_on_a_terminal(tmp_path: Path) -> None:
    import os
    import pty

    path = tmp_path / "long.jsonl"
    _long_journal(path, 25_000)
    quiet = waybook("tree", path)
    assert quiet.returncode == 0
    assert quiet.stderr == "", "no progress output when stderr is not a terminal"
    main, side = pty.openpty()
    run = subprocess.run(
        [installed(), "tree", str(path)],
        stderr=side,
        stdout=subprocess.PIPE,
        env=installed_env(),
        check=False,
    )
    os.close(side)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert run.returncode == 0
    assert b"replaying" in seen


def test_python_dash_m_waybook_is_the_same_command() -> None:
    import sys

    from waybook import __version__

    run = subprocess.run(
        [sys.executable, "-m", "waybook", "--version"],
        capture_output=True,
        text=True,
        env=installed_env(),  # this checkout's code, wherever the tests run from
        check=False,
    )
    assert run.returncode == 0
    assert run.stdout.strip() == f"waybook {__version__}"


def test_the_smoke_tests_skip_without_the_console_script_but_fail_under_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `waybook` on it
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        installed()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        installed()


def test_memory_shows_a_path_or_runs_an_action_in_one_command_tree(tmp_path: Path) -> None:
    assert waybook("demo", tmp_path / "d").returncode == 0
    journal = tmp_path / "d" / "memory.jsonl"
    listing = waybook("memory", journal, "--json", "--at", "1")
    assert listing.returncode == 0, listing.stderr
    assert waybook("memory", "show", journal, "--json", "--at", "1").stdout == listing.stdout
    assert waybook("memory", "--json", "--at", "1", journal).stdout == listing.stdout, "options before PATH"
    for action in ("show", "export-git", "import-git", "sync"):
        helped = waybook("memory", action, "--help")
        assert helped.returncode == 0
        assert f"Example: waybook memory {action}" in helped.stdout
    nothing = waybook("memory")
    assert nothing.returncode == 2
    assert "give PATH or --identity ID" in nothing.stderr
    both = waybook("memory", "--history", "/memories/payments.md", journal, "--cat", "/memories/payments.md")
    assert both.returncode == 2
    assert "choose one of --history FILE and --cat FILE" in both.stderr
    misplaced = waybook("memory", "--at", "1", "export-git", journal, tmp_path / "repo")
    assert misplaced.returncode == 2
    assert "--at: an option of `waybook memory PATH`" in misplaced.stderr
    assert not (tmp_path / "repo").exists()


def test_memory_takes_store_before_or_after_the_journal_id(tmp_path: Path) -> None:
    from waybook.memory import Memory
    from waybook.stores import open_store

    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        memory = Memory(
            store.create("agent", role="working_memory", metadata={"scope": "agent"}), scope="agent"
        )
        assert memory.execute({"command": "create", "path": "/memories/a.md", "text": "x"}).ok
    before = waybook("memory", "--store", url, "agent", "--json")
    assert before.returncode == 0, before.stderr
    assert [f["path"] for f in json.loads(before.stdout)["files"]] == ["/memories/a.md"]
    assert waybook("memory", "agent", "--store", url, "--json").stdout == before.stdout
    out = waybook("memory", "--store", url, "export-git", "agent", tmp_path / "repo", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["commits"] == 1


def test_verify_reports_an_unreadable_file_in_one_line_and_goes_on_to_the_next(
    session_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from waybook.commands import verify

    unreadable = tmp_path / "unreadable.jsonl"
    unreadable.write_bytes(session_file.read_bytes())
    proved = verify._proof

    def proof(store: Any, path: Path) -> Any:
        if path == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return proved(store, path)

    monkeypatch.setattr(verify, "_proof", proof)
    run = waybook("verify", unreadable, session_file, "--json")
    assert run.returncode == 2
    assert run.stderr == f"waybook: {unreadable}: Permission denied\n"
    assert [entry["path"] for entry in json.loads(run.stdout)] == [str(session_file)]


STORE_COMMANDS = [
    ["verify"], ["tree"], ["log"], ["show"], ["diff"], ["export"], ["import"], ["repair"], ["memory"],
    ["memory", "export-git"], ["memory", "import-git"], ["ls"], ["gc"], ["search"],
]  # fmt: skip


@pytest.mark.parametrize("command", STORE_COMMANDS, ids=" ".join)
def test_every_store_option_is_the_same_option(command: list[str]) -> None:
    helped = " ".join(waybook(*command, "--help").stdout.split())
    assert "--store URL" in helped
    assert "(file:DIR, sqlite:FILE, postgresql://...)" in helped


def test_an_import_into_a_store_with_a_bad_url_is_a_usage_error(tmp_path: Path) -> None:
    pi = tmp_path / "pi.jsonl"
    pi.write_text(
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    )
    run = waybook("import", "pi", pi, "--store", "ftp://x", "-o", "s1")
    assert run.returncode == 2
    assert run.stderr.startswith("waybook: 'ftp://x': unknown store scheme"), run.stderr
    assert run.stderr.count("\n") == 1, run.stderr
