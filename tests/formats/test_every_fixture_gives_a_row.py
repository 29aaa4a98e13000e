"""Issue 44, done when: every shared fixture, and every fixture of this repository written by a real tool,
imports, verifies and exports at least one training row (a sub-agent's file on its own too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.langgraph_threads import THREAD_JOURNAL, fixture_store
from tests.helpers.paths import FIXTURES, SHARED_FIXTURES
from waybook.export._openai_format import problems

SHARED = sorted(SHARED_FIXTURES.rglob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
"""Every shared session file, sub-agents' files included: each imports on its own too."""
OWN = [
    FIXTURES / "codex" / "event-prompts.jsonl",
    *sorted((FIXTURES / "pi").glob("*.jsonl")),
]
DATABASES = [
    ("langgraph", FIXTURES / "langgraph" / "checkpoints.db", ["--thread", "thread-1"]),
    ("openai-agents", FIXTURES / "openai-agents" / "sqlite-session.db", ["--session", "support-1"]),
    ("openai-agents", FIXTURES / "openai-agents" / "advanced-session.db", []),
]


def rows_of(tmp_path: Path, *source: str) -> list[dict[str, object]]:
    out = tmp_path / "rows.jsonl"
    run = waybook("export", *source, "--format", "openai", "--branches", "all", "-o", out)
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for row in rows:
        assert problems(row) == []
    return rows


@pytest.mark.parametrize(
    "session",
    SHARED + OWN,
    ids=lambda p: str(p.relative_to(SHARED_FIXTURES if SHARED_FIXTURES in p.parents else FIXTURES)),
)
def test_a_session_file_imports_verifies_and_gives_a_training_row(session: Path, tmp_path: Path) -> None:
    imported = waybook("import", "auto", session, "-o", tmp_path / "s.jsonl", "--json")
    assert imported.returncode == 0, imported.stdout
    journal = Path(json.loads(imported.stdout)["journals"][0]["journal"])
    assert waybook("verify", journal).returncode == 0
    assert rows_of(tmp_path, str(journal))


@pytest.mark.parametrize(("source", "database", "extra"), DATABASES, ids=lambda v: str(v)[-30:])
def test_a_database_imports_verifies_and_gives_a_training_row(
    source: str, database: Path, extra: list[str], tmp_path: Path
) -> None:
    if source == "langgraph":
        pytest.importorskip("ormsgpack")
    out = tmp_path / "s.jsonl"
    imported = waybook("import", source, database, "-o", out, *extra)
    assert imported.returncode == 0, imported.stderr
    assert waybook("verify", out).returncode == 0
    assert rows_of(tmp_path, str(out))


@pytest.mark.parametrize("name", ["saver-store", "before-nodes"])
def test_a_langgraph_store_verifies_and_gives_a_training_row(name: str, tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    url = fixture_store(name, tmp_path)
    if name == "before-nodes":
        assert waybook("langgraph", "derive", "--store", url).returncode == 0
    assert waybook("verify", "--store", url, THREAD_JOURNAL).returncode == 0
    assert len(rows_of(tmp_path, "--store", url, THREAD_JOURNAL)) == 2
