"""The README's screenshot of the viewer is a real Claude Code session (shared/fixtures), made here.

`WAYBOOK_UPDATE_SCREENSHOT=1 python -m pytest tests/view/test_readme_screenshot.py` writes it to
docs/images/viewer.png, where the README and docs/view.md show it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.paths import DOCS
from tests.helpers.viewer import open_page, severe
from waybook.cli import main

SPOTTER = SHARED_FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@needs_shared(SPOTTER.is_file())
def test_the_readme_screenshot_is_a_real_claude_code_session_with_its_harness_hidden(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    assert main(["import", "claude-code", str(SPOTTER), "-o", str(tmp_path / "session.jsonl")]) == 0
    assert main(["view", str(tmp_path / "session.jsonl"), "-o", str(tmp_path / "session.html")]) == 0
    open_page(browser, (tmp_path / "session.html").as_uri())
    assert browser.find_element(By.ID, "title").text == "Implement spotter-gqc"
    assert browser.find_element(By.ID, "harness-count").text == "1371 harness entries hidden"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tabs a")) == 3  # the session and its two sub-agents
    call = browser.find_elements(By.CSS_SELECTOR, "details.tool-call")[0]
    call.find_element(By.TAG_NAME, "summary").click()
    shot = tmp_path / "viewer.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    assert severe(browser) == []
    if os.environ.get("WAYBOOK_UPDATE_SCREENSHOT") == "1":
        shutil.copy(shot, DOCS / "images" / "viewer.png")
