"""A permalink opens its node in a session of any size: the page lays out the target's neighbourhood
first and the rest around it (issue 48: `#n=` past the first 200 rendered entries stayed at the top)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.viewer import change_hash, in_view, long_session, open_page, severe, wait_for
from waybook.cli import main


@pytest.fixture(scope="module", params=[2_000, pytest.param(10_000, marks=pytest.mark.slow)])
def long_page(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """A session of 10,000 records (the issue's; `-m slow`), and of 2,000 in the default run: either is
    far past the first screen's entries."""
    folder = tmp_path_factory.mktemp("long")
    ids = long_session(folder / "long.jsonl", request.param)
    assert main(["view", str(folder / "long.jsonl"), "-o", str(folder / "long.html")]) == 0
    return folder / "long.html", ids


def test_in_a_browser_a_permalink_to_the_last_node_of_a_long_session_shows_it_on_the_first_screen(
    long_page: tuple[Path, dict[str, Any]], browser: object
) -> None:
    from selenium.webdriver.common.by import By

    page, ids = long_page
    browser.get("about:blank")
    browser.get(page.as_uri() + "#n=" + ids["last"])
    wait_for(browser, "return document.body.dataset.ready === '1'")
    target = browser.find_element(By.ID, f"n-{ids['last']}")  # laid out before the page said it was ready
    assert "target" in target.get_attribute("class")
    assert in_view(browser, target)
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert in_view(browser, target)  # what was laid out above it afterwards did not push it away
    articles = browser.find_elements(By.CSS_SELECTOR, "#conversation > article")
    assert (
        len(articles) == 3 * ids["turns"]
    )  # every turn: the question, the call (its result inside), the answer
    assert severe(browser) == []


def test_in_a_browser_a_permalink_to_a_tool_result_opens_its_call(
    long_page: tuple[Path, dict[str, Any]], browser: object
) -> None:
    from selenium.webdriver.common.by import By

    page, ids = long_page
    open_page(browser, page.as_uri() + "#n=" + ids["middle_result"])
    result = browser.find_element(By.ID, f"n-{ids['middle_result']}")
    assert result.get_attribute("class") == "tool-result target"
    assert result.is_displayed()  # its tool call is open
    assert in_view(browser, result)

    change_hash(browser, "#n=" + ids["last"])  # a link within the page
    assert in_view(browser, browser.find_element(By.ID, f"n-{ids['last']}"))


def test_the_first_screen_carries_a_bounded_slice_of_a_session_of_harness_entries() -> None:
    from waybook.view._first_screen import FIRST_NODES, FIRST_SCREEN, first_screen

    nodes = [
        {"id": f"n{i}", "parent": f"n{i - 1}" if i else None, "harness": "progress" if i % 100 else None}
        for i in range(20_000)
    ]
    data = {"nodes": nodes, "active_leaf": "n19999", "leaves": [], "results": {}, "links": {}, "memory": {}}
    first = first_screen(data)
    assert len(first["first_path"]) == FIRST_NODES  # 20 conversation entries in 2,000: not 60 of them
    assert [n["id"] for n in first["nodes"]] == first["first_path"]
    few = first_screen({**data, "nodes": [{**n, "harness": None} for n in nodes]})
    assert few["first_path"] == [f"n{i}" for i in range(FIRST_SCREEN)]
