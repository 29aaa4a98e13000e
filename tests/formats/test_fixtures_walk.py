"""Issue 33, done when: every real session file in shared/fixtures imports (format read from its
content), verifies, and exports valid training rows with no harness noise in them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook.export._openai_format import problems

SESSIONS = (
    sorted(
        p
        for p in SHARED_FIXTURES.rglob("*.jsonl")
        if "subagents" not in p.parts and not p.name.startswith("agent-")
    )
    if SHARED_FIXTURES.is_dir()
    else []
)
pytestmark = pytest.mark.skipif(not SESSIONS, reason="shared/fixtures is not beside this checkout")
ANSI = re.compile(r"\x1b\[")
# what the harness wrote as a user turn (a tool's output may quote these: a file of Claude Code's source)
HARNESS = re.compile(
    r"<local-command-caveat>|<command-name>|<local-command-stdout>|^/(compact|clear|model)\b", re.M
)


def texts(row: object) -> list[str]:
    if isinstance(row, str):
        return [row]
    if isinstance(row, dict):
        return [t for v in row.values() for t in texts(v)]
    if isinstance(row, list):
        return [t for v in row for t in texts(v)]
    return []


FULL_SIZE = {"pi/before-compaction.jsonl"}
"""Slow (13 s: every branch exported twice); test_pi_fidelity and test_training_exports read it by default."""


@pytest.mark.parametrize(
    "session",
    [
        pytest.param(p, marks=pytest.mark.slow) if str(p.relative_to(SHARED_FIXTURES)) in FULL_SIZE else p
        for p in SESSIONS
    ],
    ids=lambda p: str(p.relative_to(SHARED_FIXTURES)),
)
def test_every_fixture_imports_verifies_and_exports_clean_valid_rows(session: Path, tmp_path: Path) -> None:
    imported = waybook("import", "auto", session, "-o", tmp_path / "s.jsonl", "--json")
    assert imported.returncode == 0, imported.stdout
    journals = [Path(j["journal"]) for j in json.loads(imported.stdout)["journals"]]
    verified = waybook("verify", *journals)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    for journal in journals:
        for mode in ([], ["--turns"]):
            out = tmp_path / f"{journal.stem}{''.join(mode)}.rows.jsonl"
            run = waybook("export", journal, "--format", "openai", "--branches", "all", *mode, "-o", out)
            assert run.returncode == 0, run.stderr
            for line in out.read_text().splitlines():
                row = json.loads(line)
                assert problems(row) == []
                messages = row["messages"]
                noisy = [t for t in texts(messages) if ANSI.search(t)]
                noisy += [t for m in messages if m["role"] == "user" for t in texts(m) if HARNESS.search(t)]
                assert noisy == [], noisy[0][:200]
