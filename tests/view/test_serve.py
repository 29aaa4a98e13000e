"""`waybook serve`: a read-only web UI over a store that follows its feed."""

from __future__ import annotations

import http.client
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from waybook import Session
from waybook.stores import open_store
from waybook.view import ViewServer

from .conftest import wait_for


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    url = f"file:{tmp_path / 'store'}"
    with open_store(url) as store:
        session = Session.create(store.create("first", role="session"), journal_id="first")
        session.user("<b>what</b> is in the store?")
        session.assistant("Two journals.")
        second = Session.create(store.create("second", role="session"), journal_id="second")
        second.user("the second one")
    return url


@pytest.fixture
def server(store_url: str) -> Iterator[ViewServer]:
    served = ViewServer(store_url, port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.server_close()
    thread.join(timeout=10)


def get(server: ViewServer, path: str, *, host: str | None = None, method: str = "GET") -> tuple[int, str]:
    connection = http.client.HTTPConnection(*server.bound, timeout=30)
    headers = {"Host": host} if host else {}
    connection.request(method, path, headers=headers)
    response = connection.getresponse()
    return response.status, response.read().decode()


def test_the_front_page_lists_every_journal_with_its_title_and_proof(server: ViewServer) -> None:
    status, page = get(server, "/")
    assert status == 200
    assert "&lt;b&gt;what&lt;/b&gt; is in the store?" in page
    assert "<b>what" not in page
    assert page.count('href="/j/') == 2
    assert "verified" in page


def damage_record(path: Path, seq: int) -> None:
    data = bytearray(path.read_bytes())
    start = sum(len(line) + 1 for line in data.split(b"\n")[: seq - 1])
    data[start + 40] ^= 1
    path.write_bytes(bytes(data))


def test_a_damaged_journal_shows_its_proven_prefix_and_the_rest_of_the_store_stays_served(
    store_url: str, server: ViewServer
) -> None:
    with open_store(store_url) as store:
        Session(store.open("first")).user("and after that?")
    damage_record(Path(store_url.removeprefix("file:")) / "journals" / "first.jsonl", 3)  # not the last
    status, front = get(server, "/")
    assert status == 200
    assert front.count('href="/j/') == 2  # the healthy journal is still listed
    assert "FAILED at seq 3" in front
    status, page = get(server, "/j/first")
    assert status == 200
    assert "FAILED at seq 3" in page
    assert "&lt;b&gt;what&lt;/b&gt; is in the store?" in page  # the record before the damage is shown
    assert "Two journals." not in page  # the damaged record is not
    assert "corruption" in page


def test_a_torn_tail_is_shown_as_damage_not_as_verified(store_url: str, server: ViewServer) -> None:
    damage_record(Path(store_url.removeprefix("file:")) / "journals" / "second.jsonl", 2)  # its last record
    status, front = get(server, "/")
    assert status == 200
    assert "torn tail" in front
    assert front.count("verified") == 1  # only the healthy journal


def test_it_refuses_writes_unknown_pages_and_foreign_hosts(server: ViewServer) -> None:
    assert get(server, "/", method="POST")[0] == 405
    assert get(server, "/", method="DELETE")[0] == 405
    assert get(server, "/j/nope")[0] == 404
    assert get(server, "/api/wait?after=x")[0] == 400
    assert get(server, "/", host="evil.example:80")[0] == 403


def test_a_served_page_follows_the_feed_in_a_browser(
    server: ViewServer, store_url: str, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    browser.get(server.url_for("/j/first"))
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert "Two journals." in browser.find_element(By.ID, "conversation").text
    assert browser.find_element(By.ID, "live").text == "live"
    with open_store(store_url) as store:
        Session(store.open("first")).assistant("A third message, committed while the page was open.")
    wait_for(browser, "return document.body.dataset.updates === '1'")
    assert "committed while the page was open" in browser.find_element(By.ID, "conversation").text
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_the_command_prints_its_url_and_binds_loopback(store_url: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "waybook", "serve", "--store", store_url, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith(f"serving {store_url} at http://127.0.0.1:")
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


TOOL_HEAVY = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "fixtures"
    / "claude-code"
    / "spotter"
    / "tool_heavy.jsonl"
)


@pytest.mark.skipif(not TOOL_HEAVY.is_file(), reason="shared/fixtures is not beside this checkout")
def test_a_session_growing_under_watch_appears_updated_in_serve(tmp_path: Path, browser: object) -> None:
    """Issue 47: `waybook watch` appends a Claude Code session's new lines to its journal, and an open
    `waybook serve` page shows them, driven by the store's feed."""
    from selenium.webdriver.common.by import By

    from tests.helpers.cli_runner import waybook

    folder, url = tmp_path / "projects" / "p", f"file:{tmp_path / 'store'}"
    folder.mkdir(parents=True)
    lines = TOOL_HEAVY.read_bytes().splitlines(keepends=True)
    session = folder / TOOL_HEAVY.name
    session.write_bytes(b"".join(lines[:21]))

    def watch_once() -> None:
        run = waybook(
            "watch", folder.parent, "--store", url, "--state", tmp_path / "state", "--once", "--settle", "0"
        )
        assert run.returncode == 0, run.stderr

    watch_once()
    served = ViewServer(url, port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(served.url_for("/j/d6e0bada-1959-4eec-a9d2-0bfade768d8f"))
        wait_for(browser, "return document.body.dataset.complete === '1'")
        conversation = browser.find_element(By.ID, "conversation").text
        assert "Phoenix server is starting in the background" in conversation
        assert "scrolling back in xterm.js" not in conversation
        session.write_bytes(b"".join(lines))  # the agent went on
        watch_once()
        wait_for(browser, "return document.body.dataset.updates === '1'")
        assert "scrolling back in xterm.js" in browser.find_element(By.ID, "conversation").text
    finally:
        served.shutdown()
        served.server_close()
        thread.join(timeout=10)
