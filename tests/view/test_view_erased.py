"""Issue 46 in the viewer: an erased record is shown as the placeholder naming its erasure's seq and
reason, escaped like any session text, in a real browser; the page's HTML never holds the old text."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from tests.helpers.erased_sessions import ASK, CALL, ERASURE, NEIGHBOURS, REASON, RESULT, SECRET, tool_session
from tests.helpers.viewer import front_page, severe
from waybook import JsonlJournal
from waybook.cli import main
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import open_store
from waybook.view import page_data

from .conftest import wait_for

HOSTILE_REASON = "<img src=x onerror=document.title='pwned'> GDPR request"
COMPLETE = "return document.body.dataset.complete === '1'"


def erased_file(path: Path, reason: str = HOSTILE_REASON) -> int:
    """The tool session with its call and result erased for a reason that is HTML; the erasure's seq."""
    with JsonlJournal(path) as journal:
        tool_session(journal)
        receipt = erase(journal, [CALL, RESULT], reason=reason)
    return receipt.erasures[0].seq


def test_the_page_data_shows_each_erased_node_as_its_placeholder(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    by = erased_file(path)
    with JsonlJournal(path, readonly=True) as journal:
        records = list(journal.read())
        data = page_data(records, verify(journal), journal_id="vault")
    nodes = {n["seq"]: n for n in data["nodes"]}
    shown = erased_placeholder(by, HOSTILE_REASON)
    assert nodes[RESULT]["erased"] == by
    assert nodes[RESULT]["blocks"] == [{"type": "text", "text": shown}]
    assert nodes[CALL]["blocks"][0] == {"type": "text", "text": shown}  # plain text, not Markdown
    assert [b["call_id"] for b in nodes[CALL]["blocks"][1:]] == ["c1"]  # the call its result answers
    assert "erased" not in nodes[RESULT + 1]


def test_a_page_shows_the_placeholder_escaped_and_never_the_erased_text(
    tmp_path: Path, browser: object
) -> None:
    path = tmp_path / "s.jsonl"
    by = erased_file(path)
    out = tmp_path / "s.html"
    assert main(["view", str(path), "-o", str(out)]) == 0
    assert SECRET not in out.read_text()
    browser.get(out.as_uri())  # type: ignore[attr-defined]
    wait_for(browser, COMPLETE)
    text = browser.execute_script("return document.body.textContent")  # type: ignore[attr-defined]
    assert text.count(erased_placeholder(by, HOSTILE_REASON)) == 2  # the call's turn, its result (folded)
    for neighbour in NEIGHBOURS:
        assert neighbour in text
    assert browser.execute_script("return document.title") != "pwned"  # type: ignore[attr-defined]
    images = "return document.querySelectorAll('img[src=x]').length"
    assert browser.execute_script(images) == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("scheme", ["file", "sqlite"])
def test_the_front_page_titles_a_journal_whose_first_question_was_erased_by_its_placeholder(
    tmp_path: Path, scheme: str
) -> None:
    url = f"{scheme}:{tmp_path}/store"
    with open_store(url) as store:
        erase(tool_session(store.create("vault")), [ASK], reason=REASON)
    page = front_page(url)
    assert f"<td>{html.escape(erased_placeholder(ERASURE, REASON))}</td>" in page
    assert NEIGHBOURS[0] not in page
    assert NEIGHBOURS[2] not in page


SHOWN_TEXT = """const body = document.body.cloneNode(true);
body.querySelectorAll('script').forEach((script) => script.remove());
return body.textContent;"""
"""The page's text but its scripts' (the page's data, where the reason is JSON)."""
HOSTILE_REASONS = {
    "script": "</script><script>document.title='pwned'</script>",
    "attribute": "\"><img src=x onerror=document.title='pwned'>",
    "bidi": "\u202egnp.exe \u2066isolate",
    "long": "</script>" + "x" * 100_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_REASONS))
def test_a_hostile_reason_shows_escaped_with_no_console_error_and_no_bidirectional_control(
    tmp_path: Path, browser: object, name: str
) -> None:
    """Before, a reason's bidirectional override reached the page raw: the placeholder's closing
    bracket, and the text after it, were drawn reordered."""
    reason = HOSTILE_REASONS[name]
    path = tmp_path / "s.jsonl"
    by = erased_file(path, reason)
    out = tmp_path / "s.html"
    assert main(["view", str(path), "-o", str(out)]) == 0
    browser.get(out.as_uri())  # type: ignore[attr-defined]
    wait_for(browser, COMPLETE)
    assert severe(browser) == []
    text = browser.execute_script(SHOWN_TEXT)  # type: ignore[attr-defined]
    assert text.count(erased_placeholder(by, reason)) == 2
    assert not any(char in text for char in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert len(out.read_bytes()) < 150_000  # the placeholder cuts a long reason
    assert browser.execute_script("return document.title") != "pwned"  # type: ignore[attr-defined]
    assert browser.execute_script("return document.querySelectorAll('img[src=x]').length") == 0  # type: ignore[attr-defined]
