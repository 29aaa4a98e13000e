"""`waybook import claude-code|codex` as a user runs it: journals written, sub-agents beside, reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook.formats import ImportedSession, claude_code

pytestmark = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def test_a_claude_code_session_imports_with_its_sub_agents_as_linked_journals(tmp_path: Path) -> None:
    source = SHARED_FIXTURES / "claude-code" / "spotter" / f"{SESSION}.jsonl"
    run = waybook("import", "claude-code", source, "-o", tmp_path / "s.jsonl", "--json")
    assert run.returncode == 0, run.stderr
    reports = json.loads(run.stdout)["journals"]
    assert [Path(r["journal"]).name for r in reports] == [
        "s.jsonl",
        "s.agent-a881341.jsonl",
        "s.agent-acompact-fffbd0.jsonl",
    ]
    for report in reports:
        assert report["mapped"] + report["kept_verbatim"] + report["skipped"] == report["lines"]
    verified = waybook("verify", *sorted(tmp_path.glob("*.jsonl")))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    tree = json.loads(waybook("tree", tmp_path / "s.jsonl", "--json").stdout)
    assert {link["journal"] for link in tree["subagents"]} == {
        "s.agent-a881341",
        "s.agent-acompact-fffbd0",
    }
    assert all(link["records"] for link in tree["subagents"])  # followed to the journals beside


def test_an_import_never_overwrites_and_writes_nothing_when_any_output_exists(tmp_path: Path) -> None:
    source = SHARED_FIXTURES / "claude-code" / "spotter" / f"{SESSION}.jsonl"
    (tmp_path / "s.agent-a881341.jsonl").write_text("mine\n")
    run = waybook("import", "claude-code", source, "-o", tmp_path / "s.jsonl")
    assert run.returncode == 2
    assert "nothing was written" in run.stderr
    assert not (tmp_path / "s.jsonl").exists()
    assert (tmp_path / "s.agent-a881341.jsonl").read_text() == "mine\n"


def test_a_codex_rollout_imports_and_its_report_adds_up(tmp_path: Path) -> None:
    (source,) = (SHARED_FIXTURES / "codex").glob("rollout-*.jsonl")
    run = waybook("import", "codex", source, "-o", tmp_path / "c.jsonl", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["lines"] == 386
    assert report["mapped"] + report["kept_verbatim"] + report["skipped"] == 386
    assert waybook("verify", tmp_path / "c.jsonl").returncode == 0


def test_a_damaged_source_line_is_named_and_lenient_skips_it(tmp_path: Path) -> None:
    source = tmp_path / "broken.jsonl"
    (original,) = (SHARED_FIXTURES / "codex").glob("rollout-*.jsonl")
    lines = original.read_text().splitlines()
    lines[5] = lines[5][:40]
    source.write_text("\n".join(lines) + "\n")
    strict = waybook("import", "codex", source, "-o", tmp_path / "x.jsonl")
    assert strict.returncode == 1
    assert "line 6" in strict.stderr
    lenient = waybook("import", "codex", source, "-o", tmp_path / "y.jsonl", "--lenient", "--json")
    assert lenient.returncode == 0
    assert json.loads(lenient.stdout)["skipped_lines"][0]["line"] == 6


def test_a_folder_of_sessions_imports_into_a_store_one_journal_each(tmp_path: Path) -> None:
    store = f"file:{tmp_path / 'store'}"
    run = waybook("import", "claude-code", SHARED_FIXTURES / "claude-code", "--store", store, "--json")
    assert run.returncode == 0, run.stderr
    journals = [r["journal"] for r in json.loads(run.stdout)["journals"]]
    assert f"{SESSION}.agent-a881341" in journals
    assert len(journals) == 9  # five sessions and four sub-agents beside them
    tree = json.loads(waybook("tree", "--store", store, SESSION, "--json").stdout)
    assert all(link["records"] for link in tree["subagents"])  # followed inside the store
    again = waybook("import", "claude-code", SHARED_FIXTURES / "claude-code", "--store", store, "--json")
    assert again.returncode == 0, again.stderr  # issue 47: importing again is a no-op, not an error
    assert {j["appended"] for j in json.loads(again.stdout)["journals"]} == {0}


def test_a_damaged_session_in_a_folder_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(SHARED_FIXTURES / "codex", folder)
    broken = folder / "2026" / "rollout-broken.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"type":"session_meta"\n')
    run = waybook("import", "codex", folder, "--store", f"file:{tmp_path / 'store'}")
    assert run.returncode == 1
    assert run.stderr.startswith(f"waybook: {broken}: 1 line(s) of the codex session cannot be imported")
    assert "nothing of this import was written" in run.stderr
    assert not (tmp_path / "store").exists()


def test_a_damaged_session_after_good_ones_leaves_the_store_unwritten(tmp_path: Path) -> None:
    """Issue 50: the sessions read before the damaged one are checked and spooled, never written."""
    folder = tmp_path / "sessions"
    shutil.copytree(SHARED_FIXTURES / "codex", folder)
    broken = folder / "zz" / "rollout-broken.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"type":"session_meta"\n')
    run = waybook("import", "codex", folder, "--store", f"file:{tmp_path / 'store'}")
    assert run.returncode == 1
    assert run.stderr.startswith(f"waybook: {broken}: ")
    assert "nothing of this import was written" in run.stderr
    assert not (tmp_path / "store").exists()


def test_a_folder_import_writes_the_bytes_each_session_imported_alone_writes(tmp_path: Path) -> None:
    """Issue 50: the folder import's journals go through a spool on disk (one session in memory at a
    time); each is byte for byte the journal of its session imported alone."""
    folder, alone = f"file:{tmp_path / 'folder'}", f"file:{tmp_path / 'alone'}"
    run = waybook("import", "claude-code", SHARED_FIXTURES / "claude-code", "--store", folder, "--json")
    assert run.returncode == 0, run.stderr
    for session in claude_code.sessions_in_folder(SHARED_FIXTURES / "claude-code"):
        assert isinstance(session, ImportedSession)
        one = waybook("import", "claude-code", session.source, "--store", alone, session.journal.journal)
        assert one.returncode == 0, one.stderr
    ours = {p.name: p.read_bytes() for p in (tmp_path / "folder" / "journals").rglob("*.jsonl")}
    theirs = {p.name: p.read_bytes() for p in (tmp_path / "alone" / "journals").rglob("*.jsonl")}
    assert len(ours) == 9  # five sessions, four sub-agents
    assert ours == theirs


def test_a_folder_without_a_store_is_a_usage_error(tmp_path: Path) -> None:
    run = waybook("import", "claude-code", SHARED_FIXTURES / "claude-code", "-o", tmp_path / "x.jsonl")
    assert run.returncode == 2
    assert "--store" in run.stderr
