"""Issue 43: a page survives ids, hashes and image URLs a hostile session chooses, in a real browser.

Every id the page looks up (a node's, a tool call's, a journal's) may be any string, so the names every
JavaScript object inherits (`constructor`, `toString`, `__proto__`, `length`, ...) are ids like any other;
a hash the user pastes may be any text; an image's `data:` URL may be malformed.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.pi import HEADER_V3, answer, pi_lines, user
from tests.helpers.viewer import change_hash
from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.journal import verify
from waybook.model import ImageBlock, TextBlock, ToolCallBlock
from waybook.view import page_data

from .conftest import wait_for

RECORD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""What a journal takes as a record id (a node's id on the page)."""
COMPLETE = "return document.body.dataset.complete === '1'"


def inherited_names(driver: object) -> list[str]:
    """Every own property name of `Object.prototype` and `Array.prototype`, as this browser has them."""
    driver.get("about:blank")
    names = driver.execute_script(
        "return [...new Set(Object.getOwnPropertyNames(Object.prototype)"
        ".concat(Object.getOwnPropertyNames(Array.prototype)))].sort()"
    )
    assert {"constructor", "__proto__", "toString", "hasOwnProperty", "length", "valueOf"} <= set(names)
    return list(names)


def errors_logged(driver: object) -> list[dict[str, object]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_page(driver: object, url: str) -> None:
    driver.get_log("browser")
    driver.get(url)
    wait_for(driver, COMPLETE)


def write_named_session(path: Path, names: list[str]) -> dict[str, Any]:
    """A session whose every tool call id, tool name and model is one of `names`, and every node id too
    where a record id may be that name (it starts with a letter or digit): rounds of a user message, a
    tool call, its result and an answer; a sub-agent link at each call; an abandoned branch."""
    queue: Iterator[str] = iter([])
    counter = itertools.count()

    def ids() -> str:
        return next(queue, None) or f"record-{next(counter)}"

    def node(name: str) -> Iterator[str]:
        return iter([name] if RECORD_ID.fullmatch(name) else [])

    session = Session.create(JsonlJournal(path), journal_id="inherited", ids=ids)
    texts = []
    rounds = [names[i : i + 4] for i in range(0, len(names), 4)]
    for asked, called, result, answered in (r + r[:1] * (4 - len(r)) for r in rounds):
        queue = node(asked)
        session.user(f"asked at {asked}")
        texts.append(f"asked at {asked}")
        if called == asked:  # a short last round: one message
            continue
        queue = node(called)
        session.assistant(
            [ToolCallBlock(call_id=asked, name=called, arguments={called: result})],
            stop_reason="tool_use",
            model=called,
            usage={"input_tokens": 1},
        )
        called_id = session.leaf
        queue = node(result)
        session.tool_result(asked, f"result at {result}", tool_name=called)
        session.link_subagent(answered, at=called_id, call_id=asked, reason=f"spawned by {called}")
        queue = node(answered)
        session.assistant(f"answered at {answered}", model=answered)
        texts += [f"tool call: {called}", f"result at {result}", f"answered at {answered}"]
    tip = session.leaf
    assert tip is not None
    first = next(r.id for r in session.journal.read() if r.seq == 2)
    session.branch_from(first, reason="try again")
    session.assistant("the kept answer")
    session.journal.close()
    return {"tip": tip, "first": first, "texts": texts}


def test_a_page_renders_a_session_whose_ids_are_every_inherited_property_name(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    names = inherited_names(browser)
    ids = write_named_session(tmp_path / "s.jsonl", names)
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    open_page(browser, (tmp_path / "s.html").as_uri())
    assert browser.find_element(By.ID, "status").text == "chain verified"
    assert "the kept answer" in browser.find_element(By.ID, "conversation").text

    abandoned = browser.find_element(By.CSS_SELECTOR, "#branches li.abandoned")
    assert abandoned.get_attribute("data-leaf") == ids["tip"]
    abandoned.find_element(By.TAG_NAME, "button").click()
    wait_for(browser, COMPLETE)
    assert browser.execute_script("return document.body.dataset.viewing") == ids["tip"]
    shown = browser.find_element(By.ID, "conversation").get_attribute("textContent")
    for text in ids["texts"]:  # every node is drawn, each result inside the call it answers
        assert text in shown
    assert len(ids["texts"]) >= len(names)
    assert browser.execute_script(
        "return document.querySelectorAll('#conversation .tool-result').length"
    ) == (len(names) // 4)
    assert browser.execute_script("return document.querySelectorAll('#conversation a.subagent').length") == (
        len(names) // 4
    )
    assert errors_logged(browser) == []


@pytest.mark.parametrize("node", ["constructor", "toString", "__proto__", "hasOwnProperty", "length"])
def test_a_three_line_pi_session_with_an_inherited_id_shows_its_conversation(
    tmp_path: Path, browser: object, node: str
) -> None:
    """The red team's case: `constructor` showed "chain verified" over an empty conversation."""
    from selenium.webdriver.common.by import By

    source = tmp_path / "pi.jsonl"
    source.write_text(pi_lines(HEADER_V3, user(node, None, "hello from pi"), answer("a1", node, "hi back")))
    assert main(["import", "pi", str(source), "-o", str(tmp_path / "s.jsonl")]) == 0
    assert main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")]) == 0
    open_page(browser, (tmp_path / "s.html").as_uri())
    text = browser.find_element(By.ID, "conversation").text
    assert "hello from pi" in text
    assert "hi back" in text
    assert errors_logged(browser) == []


@pytest.mark.parametrize(
    "fragment",
    ["#n=%", "#n=%E0%A4%A", "#n=%ZZ", "#n=", "#n=constructor", "#n=__proto__", "#n=toString", "#%", "#n=%00"],
)
def test_any_hash_opens_the_page_on_its_default_branch(
    tmp_path: Path, browser: object, fragment: str
) -> None:
    from selenium.webdriver.common.by import By

    session = Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="plain")
    session.user("a question")
    session.assistant("an answer")
    session.journal.close()
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri() + fragment)
    assert "an answer" in browser.find_element(By.ID, "conversation").text
    change_hash(browser, "#n=%E0%A4%A")  # a hash changed on the page
    assert "an answer" in browser.find_element(By.ID, "conversation").text
    assert errors_logged(browser) == []


def test_a_hash_naming_an_inherited_id_opens_that_node(tmp_path: Path, browser: object) -> None:
    write_named_session(tmp_path / "s.jsonl", ["constructor", "toString", "valueOf", "hasOwnProperty"])
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri() + "#n=toString")
    assert browser.execute_script("return document.body.dataset.viewing") == "hasOwnProperty"  # its leaf
    assert browser.execute_script("return document.querySelector('.target').id") == "n-toString"
    assert errors_logged(browser) == []


NOT_BASE64_IMAGES = [  # a browser logs "Failed to load resource" for some: the page never uses them
    "data:image/png;base64,!!!not base64!!!",
    "data:image/png;base64,iVBORw0KGgo",  # cut short: not a whole number of base64 quads
    "data:image/png,%ZZ%",
    "data:image/",
    "data:image/png;charset=utf-8;base64,===",
    "data:image/png;base64, AAAA",
    "data:text/html;base64,PGI+aGk8L2I+",
    "https://example.com/cat.png",
]
NOT_IMAGES = [  # base64, but no image a browser decodes: the page swaps each for the placeholder
    "data:image/png;base64,AAAA",
    "data:image/png;base64,",
    "data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+",
]
MALFORMED_IMAGES = NOT_BASE64_IMAGES + NOT_IMAGES
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_a_malformed_image_url_is_a_placeholder_and_logs_no_error(tmp_path: Path, browser: object) -> None:
    from selenium.webdriver.common.by import By

    session = Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="images")
    blocks = [ImageBlock(source=source, media_type="image/png") for source in MALFORMED_IMAGES]
    good = ImageBlock(source=f"data:image/png;base64,{PNG_1X1}", media_type="image/png")
    session.user([TextBlock("look at these"), *blocks, good])
    session.journal.close()
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri())
    wait_for(
        browser,
        f"return document.querySelectorAll('#conversation .placeholder').length === {len(MALFORMED_IMAGES)}",
    )
    placeholders = browser.find_elements(By.CSS_SELECTOR, "#conversation .placeholder")
    assert all("image/png" in p.text for p in placeholders)
    (shown,) = browser.find_elements(By.CSS_SELECTOR, "#conversation img")
    assert shown.get_attribute("src") == good.source
    wait_for(browser, "return document.querySelector('#conversation img').complete")
    assert browser.execute_script("return document.querySelector('#conversation img').naturalWidth") == 1
    assert errors_logged(browser) == []


def test_the_page_data_keeps_only_well_formed_base64_images(tmp_path: Path) -> None:
    session = Session.create(JsonlJournal(tmp_path / "s.jsonl"), journal_id="images")
    good = f"data:image/png;base64,{PNG_1X1}"
    session.user([ImageBlock(source=s, media_type="image/png") for s in [*MALFORMED_IMAGES, good]])
    session.journal.close()
    with JsonlJournal(tmp_path / "s.jsonl", readonly=True) as journal:
        data = page_data(list(journal.read()), verify(journal), journal_id="images")
    (node,) = data["nodes"]
    assert [b["source"] for b in node["blocks"]] == [""] * len(NOT_BASE64_IMAGES) + [*NOT_IMAGES, good]
    assert json.dumps(data)  # still plain data
