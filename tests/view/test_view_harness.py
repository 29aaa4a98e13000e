"""Issue 44: the viewer and serve's pages hide harness entries behind a count and a toggle; branch labels
and titles skip them. On the shared spotter session (Claude Code) 1,371 entries are harness."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook.journal import JsonlJournal, verify
from waybook.view import ViewServer
from waybook.view._data import page_data

SPOTTER = SHARED_FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
CODEX = SHARED_FIXTURES / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
pytestmark = pytest.mark.skipif(not SPOTTER.is_file(), reason="shared/fixtures is not beside this checkout")


@pytest.fixture(scope="module")
def spotter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spotter") / "s.jsonl"
    assert waybook("import", "claude-code", SPOTTER, "-o", out).returncode == 0
    return out


def test_the_page_counts_harness_entries_marks_each_and_labels_branches_by_conversation(
    spotter: Path,
) -> None:
    with JsonlJournal(spotter) as journal:
        records = list(journal.read())
        report = verify(journal)
    data = page_data(records, report, journal_id="spotter")
    assert data["harness"] == 1371
    assert sum(1 for n in data["nodes"] if n["harness"]) == 1371
    assert not any(leaf["summary"].startswith("claude_code.") for leaf in data["leaves"])
    assert not data["title"].startswith("<")


def test_in_a_browser_harness_entries_are_hidden_until_the_toggle_shows_them(
    spotter: Path, tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "s.html"
    assert waybook("view", spotter, "-o", page).returncode == 0
    browser.get(page.as_uri())  # type: ignore[attr-defined]
    wait = "return document.body.dataset.complete === '1'"
    _wait_for(browser, wait)
    count = browser.find_element(By.ID, "harness-count")  # type: ignore[attr-defined]
    assert count.text == "1371 harness entries hidden"
    before = len(browser.find_elements(By.CSS_SELECTOR, "#conversation > article"))  # type: ignore[attr-defined]
    browser.find_element(By.ID, "harness-toggle").click()  # type: ignore[attr-defined]
    _wait_for(browser, wait)
    after = len(browser.find_elements(By.CSS_SELECTOR, "#conversation > article"))  # type: ignore[attr-defined]
    assert after > before + 1000
    assert count.text == "1371 harness entries shown"


def test_serve_counts_harness_entries_on_a_journal_page_and_titles_journals_by_their_first_prompt(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path / 'store'}"
    assert waybook("import", "claude-code", SPOTTER, "--store", url, "spotter").returncode == 0
    assert waybook("import", "codex", CODEX, "--store", url, "rollout").returncode == 0
    served = ViewServer(url, port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:

        def get(path: str) -> str:
            connection = http.client.HTTPConnection(*served.bound, timeout=60)
            connection.request("GET", path)
            response = connection.getresponse()
            assert response.status == 200
            return response.read().decode()

        front = get("/")
        assert "show tools" in front  # the Codex rollout's first prompt, not the AGENTS.md it injected
        assert "AGENTS.md instructions" not in front
        data = json.loads(get("/api/journal?id=spotter"))
        assert data["harness"] == 1371
        assert sum(1 for n in data["nodes"] if n["harness"]) == 1371
        assert 'id="harness-toggle"' in get("/j/spotter")  # the page the browser test clicks
    finally:
        served.shutdown()
        served.server_close()
        thread.join(timeout=10)


def _wait_for(driver: object, script: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 60).until(lambda d: d.execute_script(script))
