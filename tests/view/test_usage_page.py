"""A page says what each turn cost and in total, and draws tokens and latency on a timeline (issue 48)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.viewer import open_page, severe
from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.journal import verify
from waybook.projections import FixedPrices, Rate, Rates, usage_entries
from waybook.view import page_data, render_page

PRICES = FixedPrices({"m-1": Rates(input=Rate(Decimal(3)), output=Rate(Decimal(15)))}, name="test prices")
SPOTTER = SHARED_FIXTURES / "claude-code" / "spotter"
SPOTTER_SESSION = SPOTTER / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def priced_session(path: Path) -> list[str]:
    session = Session.create(JsonlJournal(path), journal_id="priced")
    session.user("Sum the column.")
    first = session.assistant("Reading it.", model="m-1", usage={"input_tokens": 1000, "output_tokens": 100})
    second = session.assistant("It is 42.", model="m-1", usage={"input_tokens": 2000, "output_tokens": 200})
    third = session.assistant("(checked)", model="m-unknown", usage={"input_tokens": 10, "output_tokens": 1})
    session.journal.close()
    return [first.id, second.id, third.id]


def priced_page(path: Path) -> dict[str, object]:
    with JsonlJournal(path, readonly=True) as journal:
        return page_data(list(journal.read()), verify(journal), journal_id="priced", prices=PRICES)


def test_each_turn_is_priced_at_its_models_rates_and_an_unknown_model_is_named_not_zero(
    tmp_path: Path,
) -> None:
    first, second, third = priced_session(tmp_path / "s.jsonl")
    data = priced_page(tmp_path / "s.jsonl")
    cost = {n["id"]: n.get("cost") for n in data["nodes"]}  # type: ignore[attr-defined]
    assert cost[first] == pytest.approx(0.0045)  # 1000 x $3/M + 100 x $15/M
    assert cost[second] == pytest.approx(0.009)
    assert cost[third] is None
    assert data["cost"] == {
        "prices": "test prices",
        "note": None,
        "total": pytest.approx(0.0135),
        "unpriced": ["m-unknown"],
        "models": {
            "m-1": {
                "requests": 2,
                "tokens": {
                    "input": 3000,
                    "output": 300,
                    "cache_read": 0,
                    "cache_write": 0,
                    "cache_write_1h": 0,
                    "total": 3300,
                },
                "cost": pytest.approx(0.0135),
            },
            "m-unknown": {
                "requests": 1,
                "tokens": {
                    "input": 10,
                    "output": 1,
                    "cache_read": 0,
                    "cache_write": 0,
                    "cache_write_1h": 0,
                    "total": 11,
                },
                "cost": None,
            },
        },
    }


def test_in_a_browser_the_cost_of_each_turn_the_total_and_the_timeline_are_shown(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    first, second, third = priced_session(tmp_path / "s.jsonl")
    (tmp_path / "s.html").write_text(render_page(priced_page(tmp_path / "s.jsonl")))
    open_page(browser, (tmp_path / "s.html").as_uri())
    assert browser.find_element(By.ID, "cost-total").text == "total $0.01 (test prices)"
    assert browser.find_element(By.CSS_SELECTOR, f"#n-{first} .cost").text == "$0.0045"
    assert browser.find_element(By.CSS_SELECTOR, f"#n-{second} .cost").text == "$0.0090"
    assert browser.find_elements(By.CSS_SELECTOR, f"#n-{third} .cost") == []
    models = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#usage li.model-usage")]
    assert models == [
        "m-1: 2 requests · $0.01 · in 3.0k · out 300",
        "m-unknown: 1 requests · not priced · in 10 · out 1",
    ]
    timeline = browser.find_element(By.CSS_SELECTOR, "#timeline svg.timeline")
    assert timeline.get_attribute("data-bars") == "3"
    step = float(timeline.get_attribute("data-step"))
    stretch = timeline.size["width"] / float(timeline.get_attribute("data-width"))  # drawn to fit its box

    def point_at(bar: int) -> ActionChains:  # offsets count from the element's centre
        x = (2 + (bar + 0.5) * step) * stretch - timeline.size["width"] / 2
        return ActionChains(browser).move_to_element_with_offset(timeline, int(x), 0)

    point_at(1).perform()
    tip = browser.find_element(By.ID, "timeline-tip").text
    assert "input 2.0k (cache read 0) · output 200" in tip
    assert tip.endswith("$0.0090, $0.01 so far")
    point_at(2).click().perform()
    assert browser.execute_script("return location.hash") == f"#n={third}"
    assert severe(browser) == []


@needs_shared(SPOTTER_SESSION.is_file())
def test_in_a_browser_a_real_claude_code_session_shows_genai_prices_cost(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    from waybook.prices import GenaiPrices

    assert main(["import", "claude-code", str(SPOTTER_SESSION), "-o", str(tmp_path / "s.jsonl")]) == 0
    helper = tmp_path / "s.agent-a881341.jsonl"  # a sub-agent on a model genai-prices knows
    assert main(["view", str(helper), "-o", str(tmp_path / "helper.html")]) == 0
    with JsonlJournal(helper, readonly=True) as journal:
        entries = usage_entries(list(journal.read()), prices=GenaiPrices())
    total = sum(e.cost.total for e in entries if e.cost is not None)
    assert total > 0
    open_page(browser, (tmp_path / "helper.html").as_uri())
    shown = browser.find_element(By.ID, "cost-total").text
    assert shown == f"total ${total:.2f} ({GenaiPrices().name})"
    assert len(browser.find_elements(By.CSS_SELECTOR, "article.role-assistant .cost")) == len(entries)


def test_a_served_page_is_priced_by_the_installed_table(tmp_path: Path) -> None:
    import http.client
    import json
    import re
    import threading

    from waybook.prices import GenaiPrices
    from waybook.stores import open_store
    from waybook.view import ViewServer

    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("s", role="session"), journal_id="s")
        session.user("hi")
        session.assistant(
            "hello", model="claude-sonnet-4-5-20250929", usage={"input_tokens": 1000, "output_tokens": 100}
        )
    server = ViewServer(url, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection(*server.bound, timeout=30)
        connection.request("GET", "/j/s")
        page = connection.getresponse().read().decode()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    found = re.search(r'id="waybook-data">(.*?)</script>', page, re.DOTALL)
    assert found is not None
    cost = json.loads(found.group(1))["cost"]
    assert cost["prices"] == GenaiPrices().name
    assert cost["total"] == pytest.approx(0.0045)  # $3 and $15 a million tokens
