"""Issue 21: sessions imported from other agents export as valid training data, every row of every
format, on the real shared files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.formats import SHARED_FIXTURES, journal_of
from waybook.export._openai_format import problems
from waybook.export.trajectories import Selection, TrajectoryExporter
from waybook.formats import import_claude_code, import_codex

FIXTURES = SHARED_FIXTURES
CLAUDE = sorted((FIXTURES / "claude-code").rglob("*.jsonl")) if FIXTURES.is_dir() else []
CODEX = sorted((FIXTURES / "codex").glob("rollout-*.jsonl")) if FIXTURES.is_dir() else []
pytestmark = pytest.mark.skipif(not CLAUDE, reason="shared/fixtures is not beside this checkout")


@pytest.mark.parametrize("path", [*CLAUDE, *CODEX], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_training_row_of_an_imported_session_is_valid(path: Path) -> None:
    data = path.read_bytes()
    imported = import_codex(data) if "codex" in path.parts else import_claude_code(data)
    exporter = TrajectoryExporter(journal_of(imported.records))
    rows = [*exporter.rows("openai", Selection("all")), *exporter.turns(Selection("all"))]
    assert rows
    for row in rows:
        assert problems(row) == [], row.get("metadata")
    assert list(exporter.rows("sharegpt", Selection("all")))
