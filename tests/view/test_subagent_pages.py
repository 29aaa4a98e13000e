"""`waybook view` puts a session and its sub-agents' sessions in one file, each opened at the call that
started it (issue 48: a sub-agent link needed a hand-made `<journal>.html` beside the page)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers.formats import SHARED_FIXTURES, needs_shared
from tests.helpers.viewer import open_page, severe, wait_for
from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.model import ToolCallBlock

SPOTTER_SESSION = SHARED_FIXTURES / "claude-code" / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def page_data_of(page: Path) -> dict[str, object]:
    found = re.search(r'id="waybook-data">(.*?)</script>', page.read_text(), re.DOTALL)
    assert found is not None
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def delegating_session(folder: Path) -> dict[str, str]:
    """A session whose tool call starts a sub-agent, which starts one of its own."""
    session = Session.create(JsonlJournal(folder / "lead.jsonl"), journal_id="lead")
    session.user("Find the flaky test.")
    call = session.assistant(
        [ToolCallBlock(call_id="task-1", name="Task", arguments={"prompt": "look at the CI logs"})],
        stop_reason="tool_use",
    )
    helper = session.start_subagent(
        JsonlJournal(folder / "helper.jsonl"), journal_id="helper", call_id="task-1", agent="ci-reader"
    )
    session.tool_result("task-1", "the helper found it", tool_name="Task")
    helper.user("look at the CI logs")
    asked = helper.assistant("I will ask a second helper.")
    deeper = helper.start_subagent(JsonlJournal(folder / "deeper.jsonl"), journal_id="deeper", agent="grep")
    deeper.user("grep for FAILED")
    deeper.assistant("test_retry is flaky.")
    for s in (session, helper, deeper):
        s.journal.close()
    return {"call": call.id, "asked": asked.id}


def test_the_page_holds_every_linked_sub_agent_session_found_beside_it(tmp_path: Path) -> None:
    delegating_session(tmp_path)
    assert main(["view", str(tmp_path / "lead.jsonl"), "-o", str(tmp_path / "lead.html")]) == 0
    data = page_data_of(tmp_path / "lead.html")
    assert sorted(data["subagents"]) == ["deeper", "helper"]  # type: ignore[call-overload]
    assert data["subagents_missing"] == []
    assert data["subagents"]["deeper"]["title"] == "grep for FAILED"  # type: ignore[index]


def test_a_link_naming_a_journal_outside_the_folder_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    outside = Session.create(JsonlJournal(tmp_path / "secret.jsonl"), journal_id="secret")
    outside.user("not for this page")
    outside.journal.close()
    session = Session.create(JsonlJournal(tmp_path / "inside" / "s.jsonl"), journal_id="s")
    session.user("hello")
    for name in ("../secret", str(tmp_path / "secret"), "..", "a\\..\\..\\secret"):
        session.link_subagent(name, reason="hostile")
    session.journal.close()
    assert main(["view", str(tmp_path / "inside" / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    data = page_data_of(tmp_path / "s.html")
    assert data["subagents"] == {}
    assert "not for this page" not in (tmp_path / "s.html").read_text()


def test_in_a_browser_a_sub_agent_opens_from_its_call_and_links_back(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By

    ids = delegating_session(tmp_path)
    main(["view", str(tmp_path / "lead.jsonl"), "-o", str(tmp_path / "lead.html")])
    (tmp_path / "helper.jsonl").unlink()  # the page holds it: nothing beside the page is read again
    open_page(browser, (tmp_path / "lead.html").as_uri())
    tabs = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#tabs a")]
    assert tabs == [
        "session: Find the flaky test.",
        "sub-agent: look at the CI logs",
        "sub-agent: grep for FAILED",
    ]
    call = browser.find_element(By.CSS_SELECTOR, 'details.tool-call[data-call-id="task-1"]')
    call.find_element(By.TAG_NAME, "summary").click()
    link = call.find_element(By.CSS_SELECTOR, "a.subagent")
    assert link.text == "sub-agent session: ci-reader · helper"
    link.click()
    wait_for(browser, "return document.getElementById('journal').textContent === 'helper'")
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.find_element(By.CSS_SELECTOR, "#tabs a.current").text == "sub-agent: look at the CI logs"
    assert "I will ask a second helper." in browser.find_element(By.ID, "conversation").text
    browser.find_element(By.CSS_SELECTOR, f"#n-{ids['asked']} a.subagent").click()  # a sub-agent's own
    wait_for(browser, "return document.getElementById('journal').textContent === 'deeper'")
    browser.find_element(By.CSS_SELECTOR, "#parent a").click()  # back up to the helper
    wait_for(browser, "return document.getElementById('journal').textContent === 'helper'")
    browser.find_element(By.CSS_SELECTOR, "#parent a").click()  # and to the lead, at the spawning call
    wait_for(browser, "return document.getElementById('journal').textContent === 'lead'")
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert "target" in browser.find_element(By.ID, f"n-{ids['call']}").get_attribute("class")
    assert severe(browser) == []


@needs_shared(SPOTTER_SESSION.is_file())
def test_in_a_browser_a_real_claude_code_sub_agent_opens_from_its_task_call(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    assert main(["import", "claude-code", str(SPOTTER_SESSION), "-o", str(tmp_path / "s.jsonl")]) == 0
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    open_page(browser, (tmp_path / "s.html").as_uri())
    call = browser.find_element(
        By.CSS_SELECTOR, 'details.tool-call[data-call-id="toolu_01VmaERAwhb19LGUwu9GenaK"]'
    )
    browser.execute_script("arguments[0].open = true", call)
    call.find_element(By.CSS_SELECTOR, "a.subagent").click()
    wait_for(browser, "return document.getElementById('journal').textContent === 's.agent-a881341'")
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert "SessionStart" in browser.find_element(By.ID, "conversation").text
    assert severe(browser) == []


def test_the_command_names_the_linked_journals_it_did_not_find_once(tmp_path: Path, capsys: object) -> None:
    session = Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="s")
    session.user("hello")
    for name in ("gone-1", "gone-2", "../escape"):
        session.link_subagent(name, reason="lost")
    session.journal.close()
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert err.count("not found") == 1
    assert "3 linked sub-agent journal(s) not found beside" in err
    assert "'gone-1', 'gone-2', '../escape'; their links say so" in err
    assert page_data_of(tmp_path / "s.html")["subagents_missing"] == ["gone-1", "gone-2", "../escape"]
