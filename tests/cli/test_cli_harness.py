"""Issue 44: `show`, `stats`, `view` and `serve`'s pages hide harness entries by default, with a count, and
show them on request (`--harness`, the page's toggle); titles and branch labels (the viewer's and `tree`'s)
skip them.

The sessions are real: Claude Code's spotter session (80-89% of its entries are harness) and the Codex
rollout whose first user message is the AGENTS.md instructions Codex injects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook import Session
from waybook.journal import JsonlJournal

SPOTTER = SHARED_FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = SHARED_FIXTURES / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
pytestmark = pytest.mark.skipif(not SPOTTER.is_file(), reason="shared/fixtures is not beside this checkout")


@pytest.fixture(scope="module")
def spotter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spotter") / "s.jsonl"
    assert waybook("import", "claude-code", SPOTTER, "-o", out).returncode == 0
    return out


def test_show_hides_harness_entries_with_a_count_and_shows_them_on_request(spotter: Path) -> None:
    hidden = waybook("show", spotter)
    assert hidden.returncode == 0
    assert "claude_code.progress" not in hidden.stdout
    assert "1,371 harness entries hidden (1,333 progress" in hidden.stderr
    assert "--harness shows them" in hidden.stderr
    shown = waybook("show", spotter, "--harness")
    assert shown.stdout.count("custom") > 1300
    assert "harness entries hidden" not in shown.stderr
    records = json.loads(waybook("show", spotter, "--json").stdout)["records"]
    assert sum(1 for r in records if r["harness"] == "progress") == 1333  # JSON: every entry, marked


def test_stats_counts_turns_without_harness_entries_and_says_how_many_it_left_out(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    assert waybook("import", "codex", CODEX, "-o", out).returncode == 0
    total = next(iter(json.loads(waybook("stats", out, "--json").stdout).values()))["total"]
    assert total["turns"] == 2  # the two prompts; the injected AGENTS.md instructions are harness
    assert total["harness_entries"] > 100
    counted = next(iter(json.loads(waybook("stats", out, "--json", "--harness").stdout).values()))["total"]
    assert counted["turns"] == 3
    assert counted["harness_entries"] == 0
    text = waybook("stats", out).stdout
    assert "harness entries (not counted; --harness counts them)" in text


def test_a_title_is_the_first_prompt_never_the_context_the_agent_injected(tmp_path: Path) -> None:
    store = f"file:{tmp_path / 'store'}"
    assert waybook("import", "codex", CODEX, "--store", store, "rollout").returncode == 0
    listed = waybook("ls", "--store", store)
    assert listed.returncode == 0, listed.stderr
    assert "show tools" in listed.stdout
    assert "AGENTS.md" not in listed.stdout


def test_a_branch_in_tree_is_labelled_by_its_last_message_that_is_not_harness(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="s")
        first = session.user("what is in the store?")
        session.assistant("Two journals.")
        session.user("<local-command-caveat>Caveat: do not respond.</local-command-caveat>")
        session.branch_from(first.id, reason="ask again")
        session.assistant("Three journals.")
        session.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    tree = waybook("tree", path)
    assert tree.returncode == 0, tree.stderr
    assert "Two journals." in tree.stdout
    assert "Three journals." in tree.stdout
    assert "Caveat" not in tree.stdout
    assert "command-name" not in tree.stdout
