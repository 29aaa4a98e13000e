"""`waybook view`: one self-contained page per session, escaped everywhere, proven in a real browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.journal import verify
from waybook.model import ToolCallBlock
from waybook.view import page_data, render_page

from .conftest import wait_for

HOSTILE = [
    "<script>window.pwned=1</script>",
    '<a href="javascript:window.pwned=1">click</a>',
    '<svg onload="window.pwned=1"><circle r="5"/></svg>',
    "&lt;b&gt; stays as typed &amp; </script><script>window.pwned=1</script>",
    '<img src=x onerror="window.pwned=1">',
]


def write_session(path: Path) -> dict[str, str]:
    """A session with a tool call, a result, an abandoned branch and hostile text everywhere."""
    session = Session.create(JsonlJournal(path), journal_id="viewed")
    question = session.user(HOSTILE[0])
    call = session.assistant(
        [ToolCallBlock(call_id="c1", name="bash", arguments={"cmd": HOSTILE[1]})], stop_reason="tool_use"
    )
    session.tool_result("c1", HOSTILE[2], tool_name="bash")
    abandoned = session.assistant(HOSTILE[3])
    session.branch_from(question.id, reason="regenerate without tools")
    kept = session.assistant(HOSTILE[4] + " the kept answer")
    session.journal.close()
    return {"abandoned": abandoned.id, "kept": kept.id, "question": question.id, "call": call.id}


def test_the_page_is_one_file_that_names_no_network_resource(tmp_path: Path) -> None:
    write_session(tmp_path / "s.jsonl")
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    page = (tmp_path / "s.html").read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "default-src 'none'" in page
    assert page.count("<script") == 3  # the first screen's data, the page's script, the whole session's data
    shell = page
    for element in ("waybook-first", "waybook-data"):
        data = re.search(rf'<script type="application/json" id="{element}">(.*?)</script>', page, re.DOTALL)
        assert data
        assert "<" not in data.group(1)
        shell = shell.replace(data.group(1), "")
    assert "<svg" not in shell
    assert "<img" not in shell
    assert "javascript:" not in shell


def test_page_data_pairs_calls_with_results_and_keeps_abandoned_branches(tmp_path: Path) -> None:
    ids = write_session(tmp_path / "s.jsonl")
    with JsonlJournal(tmp_path / "s.jsonl", readonly=True) as journal:
        records = list(journal.read())
        data = page_data(records, verify(journal), journal_id="viewed")
    leaves = {leaf["id"]: leaf["active"] for leaf in data["leaves"]}
    assert leaves == {ids["kept"]: True, ids["abandoned"]: False}
    assert data["moves"][0]["reason"] == "regenerate without tools"
    ((call_id, result_id),) = data["results"][ids["call"]].items()
    assert call_id == "c1"
    assert next(n for n in data["nodes"] if n["id"] == result_id)["role"] == "tool"
    assert data["status"]["ok"] is True
    again = page_data(records, verify(JsonlJournal(tmp_path / "s.jsonl", readonly=True)), journal_id="viewed")
    assert render_page(again) == render_page(data)  # the same journal renders byte-identical pages


def test_a_damaged_journal_shows_its_proven_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_session(tmp_path / "s.jsonl")
    raw = bytearray((tmp_path / "s.jsonl").read_bytes())
    lines = raw.split(b"\n")
    offset = sum(len(line) + 1 for line in lines[:4]) + lines[4].index(b'"at":"') + 8
    raw[offset] = ord("9") if raw[offset] != ord("9") else ord("8")
    (tmp_path / "s.jsonl").write_bytes(bytes(raw))
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 1
    assert "FAILED at seq 5" in capsys.readouterr().err
    data = json.loads(
        re.search(r'id="waybook-data">(.*?)</script>', (tmp_path / "s.html").read_text(), re.DOTALL).group(1)
    )
    assert data["records"] == 4
    assert data["status"]["bad_seq"] == 5


def test_an_existing_output_is_kept_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_session(tmp_path / "s.jsonl")
    (tmp_path / "s.html").write_text("mine")
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 2
    assert "--force" in capsys.readouterr().err
    assert (tmp_path / "s.html").read_text() == "mine"


# --- in a real browser (the `browser` fixture: tests/view/conftest.py) -----------------------------


def open_page(driver: object, page: Path) -> None:
    driver.get_log("browser")
    driver.get_log("performance")
    driver.get(page.as_uri())
    wait_for(driver, "return document.body.dataset.complete === '1'")


def requests_made(driver: object) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_in_a_browser_hostile_text_renders_as_text_and_runs_nothing(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By

    write_session(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, tmp_path / "s.html")
    assert browser.execute_script("return window.pwned") is None
    text = browser.find_element(By.ID, "conversation").text
    assert HOSTILE[0] in text
    assert HOSTILE[4].split(" the")[0] in text
    assert (
        browser.find_elements(By.CSS_SELECTOR, "#conversation svg, #conversation img, #conversation script")
        == []
    )
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    assert all(url.startswith(("file:", "data:")) for url in requests_made(browser))


def test_in_a_browser_a_tool_call_expands_a_branch_switches_and_search_filters(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    ids = write_session(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, tmp_path / "s.html")
    assert browser.execute_script("return document.body.dataset.viewing") == ids["kept"]

    browser.find_element(By.CSS_SELECTOR, "#branches li.abandoned button").click()
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.execute_script("return document.body.dataset.viewing") == ids["abandoned"]
    call = browser.find_element(By.CSS_SELECTOR, "details.tool-call")
    result = call.find_element(By.CSS_SELECTOR, ".tool-result")
    assert not result.is_displayed()
    call.find_element(By.TAG_NAME, "summary").click()
    assert result.is_displayed()
    assert HOSTILE[2] in result.text

    search = browser.find_element(By.ID, "search")
    search.send_keys("stays as typed")
    shown = [a for a in browser.find_elements(By.CSS_SELECTOR, "#conversation > article") if a.is_displayed()]
    assert [a.get_attribute("id") for a in shown] == [f"n-{ids['abandoned']}"]
    assert browser.find_element(By.ID, "hits").text == "1 match"
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_in_a_browser_a_permalink_opens_its_node_and_a_subagent_link_is_followed(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    ids = write_session(tmp_path / "s.jsonl")
    with JsonlJournal(tmp_path / "s.jsonl") as journal:
        Session(journal).link_subagent("helper", at=ids["call"], call_id="c1", reason="bash spawned it")
    helper = Session.create(JsonlJournal(tmp_path / "helper.jsonl"), journal_id="helper")
    helper.user("the helper's task")
    helper.journal.close()
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "viewed.html")])
    main(["view", str(tmp_path / "helper.jsonl"), "-o", str(tmp_path / "helper.html")])

    browser.get((tmp_path / "viewed.html").as_uri() + "#n=" + ids["abandoned"])
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.execute_script("return document.body.dataset.viewing") == ids["abandoned"]
    assert "target" in browser.find_element(By.ID, f"n-{ids['abandoned']}").get_attribute("class")

    spawning_call = browser.find_element(By.CSS_SELECTOR, "details.tool-call")
    spawning_call.find_element(By.TAG_NAME, "summary").click()  # the link sits at the spawning tool call
    spawning_call.find_element(By.CSS_SELECTOR, "a.subagent").click()
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.find_element(By.ID, "journal").text == "helper"
