"""`waybook serve` searches every session of its store (`/search?q=`, the full-text index) and links
each hit to its record (issue 48)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.viewer import severe, wait_for
from waybook import Session
from waybook.stores import open_store
from waybook.view import ViewServer


@pytest.fixture
def store(tmp_path: Path) -> tuple[str, dict[str, str]]:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as opened:
        first = Session.create(opened.create("first", role="session"), journal_id="first")
        first.user("How do I rotate the signing keys?")
        answer = first.assistant("Rotate them with `keys rotate --all`, then restart the workers.")
        second = Session.create(opened.create("second", role="session"), journal_id="second")
        second.user("<script>window.pwned=1</script> where are the workers?")
        second.assistant("The workers run on the batch hosts.")
    return url, {"answer": answer.id}


@pytest.fixture
def server(store: tuple[str, dict[str, str]]) -> Iterator[ViewServer]:
    served = ViewServer(store[0], port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()
    thread.join(timeout=10)


def get(server: ViewServer, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection(*server.bound, timeout=30)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read().decode()


def test_a_search_lists_hits_across_journals_escaped_and_linked_to_their_records(
    server: ViewServer, store: tuple[str, dict[str, str]]
) -> None:
    status, page = get(server, "/search?q=workers")
    assert status == 200
    assert '<p id="count">3 hits for “workers”</p>' in page
    assert page.count('href="/j/first#n=') == 1
    assert page.count('href="/j/second#n=') == 2
    assert f'href="/j/first#n={store[1]["answer"]}"' in page
    assert "<script>window" not in page
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in page
    assert get(server, "/search?q=%3C%3E")[1].count("has no words to search for") == 1
    assert '<p id="count">' not in get(server, "/search")[1]  # a blank query is the form alone


def test_in_a_browser_the_front_page_searches_the_store_and_a_hit_opens_its_record(
    server: ViewServer, store: tuple[str, dict[str, str]], browser: object
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    browser.get(server.url_for("/"))
    browser.find_element(By.CSS_SELECTOR, "form input[name=q]").send_keys("restart", Keys.ENTER)
    wait_for(browser, "return document.getElementById('hits') !== null")
    assert browser.find_element(By.ID, "count").text == "1 hit for “restart”"
    browser.find_element(By.CSS_SELECTOR, "#hits a").click()
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.find_element(By.ID, "journal").text == "first"
    assert "target" in browser.find_element(By.ID, f"n-{store[1]['answer']}").get_attribute("class")

    box = browser.find_element(By.CSS_SELECTOR, "#store-search input")  # a session page searches too
    box.send_keys("batch hosts", Keys.ENTER)
    wait_for(browser, "return document.getElementById('hits') !== null")
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#hits a")] == ["second"]
    assert browser.execute_script("return window.pwned") is None
    assert severe(browser) == []
