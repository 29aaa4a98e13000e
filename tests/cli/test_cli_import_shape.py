"""Issue 33, points 2-4: one CLI shape for `waybook import`, folder imports that skip stray files when
asked, and one report schema for every format (failures included) with --json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.formats.test_pi_loader_rules import JOINED_SELF_PARENT
from tests.helpers.cli_runner import waybook
from tests.helpers.paths import FIXTURES, SHARED_FIXTURES
from waybook.formats._detect import detect_format

pytestmark = pytest.mark.skipif(
    not SHARED_FIXTURES.is_dir(), reason="shared/fixtures is not beside this checkout"
)
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
CLAUDE = SHARED_FIXTURES / "claude-code" / "spotter" / f"{SESSION}.jsonl"
(CODEX,) = sorted((SHARED_FIXTURES / "codex").glob("rollout-*.jsonl")) or [
    SHARED_FIXTURES / "codex" / "missing"
]
SCHEMA = {
    "ok",
    "format",
    "source",
    "lines",
    "mapped",
    "kept_verbatim",
    "skipped",
    "inferred",
    "skipped_lines",
    "skipped_files",
    "warnings",
    "journals",
}


def pi_file(tmp_path: Path) -> Path:
    path = tmp_path / "pi.jsonl"
    path.write_text(JOINED_SELF_PARENT)
    return path


def test_store_url_then_journal_id_is_the_same_as_o_id(tmp_path: Path) -> None:
    store = f"file:{tmp_path / 'store'}"
    positional = waybook("import", "codex", CODEX, "--store", store, "one")
    assert positional.returncode == 0, positional.stderr
    synonym = waybook("import", "codex", CODEX, "--store", store, "-o", "two")
    assert synonym.returncode == 0, synonym.stderr
    for journal_id in ("one", "two"):
        assert waybook("verify", "--store", store, journal_id).returncode == 0


def test_two_ids_for_one_journal_are_a_usage_error(tmp_path: Path) -> None:
    run = waybook("import", "codex", CODEX, "--store", f"file:{tmp_path / 's'}", "one", "-o", "two")
    assert run.returncode == 2
    assert "two ids" in run.stderr
    assert not (tmp_path / "s").exists()


def test_force_replaces_an_earlier_import_and_without_it_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    assert waybook("import", "codex", CODEX, "-o", out).returncode == 0
    before = out.read_bytes()
    again = waybook("import", "codex", CODEX, "-o", out)
    assert again.returncode == 2
    assert "--force" in again.stderr
    forced = waybook("import", "codex", CODEX, "-o", out, "--force")
    assert forced.returncode == 0, forced.stderr
    assert out.read_bytes() == before
    assert waybook("verify", out).returncode == 0


def test_one_session_imports_twice_into_one_folder_under_two_names(tmp_path: Path) -> None:
    for name in ("first", "second"):
        run = waybook("import", "claude-code", CLAUDE, "-o", tmp_path / f"{name}.jsonl")
        assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert "first.agent-a881341.jsonl" in names
    assert "second.agent-a881341.jsonl" in names
    tree = json.loads(waybook("tree", tmp_path / "second.jsonl", "--json").stdout)
    assert all(link["journal"].startswith("second.agent-") and link["records"] for link in tree["subagents"])


def codex_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    (folder / "2026").mkdir(parents=True)
    shutil.copy(CODEX, folder / "2026" / CODEX.name)
    shutil.copy(CLAUDE, folder / "2026" / "stray.jsonl")  # not a Codex file
    return folder


def test_lenient_folder_import_skips_a_file_of_another_format_and_reports_it(tmp_path: Path) -> None:
    folder = codex_folder(tmp_path)
    store = f"file:{tmp_path / 'store'}"
    strict = waybook("import", "codex", folder, "--store", store)
    assert strict.returncode == 1
    assert "stray.jsonl" in strict.stderr
    assert "nothing of this import was written" in strict.stderr
    assert not (tmp_path / "store").exists()
    lenient = waybook("import", "codex", folder, "--store", store, "--lenient", "--json")
    assert lenient.returncode == 0, lenient.stdout
    report = json.loads(lenient.stdout)
    assert [Path(f["file"]).name for f in report["skipped_files"]] == ["stray.jsonl"]
    assert len(report["journals"]) == 1


def test_a_codex_file_of_token_counts_only_is_reported_as_such_not_as_damage(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    counts = {
        "timestamp": "2026-05-11T08:27:17.490Z",
        "type": "event_msg",
        "payload": {"type": "token_count"},
    }
    (folder / "rollout-counts.jsonl").write_text(json.dumps(counts) + "\n" + json.dumps(counts) + "\n")
    shutil.copy(CODEX, folder / CODEX.name)
    run = waybook("import", "codex", folder, "--store", f"file:{tmp_path / 's'}", "--lenient", "--json")
    (skipped,) = json.loads(run.stdout)["skipped_files"]
    assert "only token counts" in skipped["reason"]
    alone = waybook("import", "codex", folder / "rollout-counts.jsonl", "-o", tmp_path / "x.jsonl")
    assert "only token counts" in alone.stderr


@pytest.mark.parametrize("fmt", ["pi", "codex", "claude-code"])
def test_every_format_reports_in_one_schema(tmp_path: Path, fmt: str) -> None:
    source = {"pi": pi_file(tmp_path), "codex": CODEX, "claude-code": CLAUDE}[fmt]
    run = waybook("import", fmt, source, "-o", tmp_path / "out.jsonl", "--json")
    assert run.returncode == 0, run.stdout
    report = json.loads(run.stdout)
    assert set(report) == SCHEMA
    assert isinstance(report["inferred"], int)
    assert report["journals"][0]["journal"] == str(tmp_path / "out.jsonl")
    assert "inferred_notes" not in report["journals"][0]


def test_inferred_notes_are_counted_and_listed_only_with_verbose(tmp_path: Path) -> None:
    source = pi_file(tmp_path)
    quiet = waybook("import", "pi", source, "-o", tmp_path / "a.jsonl")
    assert "inferred" in quiet.stderr
    assert "names no entry" not in quiet.stderr
    loud = waybook("import", "pi", source, "-o", tmp_path / "b.jsonl", "--json", "--verbose")
    notes = json.loads(loud.stdout)["journals"][0]["inferred_notes"]
    assert any("names no entry" in note for note in notes)


def test_with_json_a_failure_is_json_on_stdout_too(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    run = waybook("import", "codex", bad, "-o", tmp_path / "x.jsonl", "--json")
    assert run.returncode == 1
    failure = json.loads(run.stdout)
    assert failure["ok"] is False
    assert "line 1" in failure["error"]
    usage = waybook("import", "codex", tmp_path / "nowhere.jsonl", "-o", tmp_path / "y.jsonl", "--json")
    assert usage.returncode == 2
    assert json.loads(usage.stdout)["ok"] is False


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (SHARED_FIXTURES / "pi" / "before-compaction.jsonl", "pi"),
        (CODEX, "codex"),
        (CLAUDE, "claude-code"),
        (FIXTURES / "openai-agents" / "sqlite-session.db", "openai-agents"),
        (FIXTURES / "langgraph" / "checkpoints.db", "langgraph"),
    ],
)
def test_the_format_is_read_from_the_content(path: Path, fmt: str) -> None:
    assert detect_format(path) == fmt


def test_import_auto_picks_the_format_and_reports_it(tmp_path: Path) -> None:
    run = waybook("import", "auto", CODEX, "-o", tmp_path / "c.jsonl", "--json")
    assert run.returncode == 0, run.stdout
    assert json.loads(run.stdout)["format"] == "codex"
    unknown = tmp_path / "x.jsonl"
    unknown.write_text('{"hello": 1}\n')
    refused = waybook("import", "auto", unknown, "-o", tmp_path / "y.jsonl")
    assert refused.returncode == 2
    assert "name one" in refused.stderr


@pytest.mark.parametrize("command", ["tree", "show", "log"])
def test_a_read_command_on_a_foreign_file_names_the_import_that_reads_it(command: str) -> None:
    run = waybook(command, CODEX)
    assert run.returncode != 0
    assert f"waybook import codex {CODEX}" in run.stderr
