"""Every branch as a graph with the active path and the leaf moves, and two branches compared (issue 48)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.viewer import open_page, severe, wait_for
from waybook import JsonlJournal, Session
from waybook.cli import main
from waybook.journal import verify
from waybook.view import page_data


def three_branches(path: Path) -> dict[str, str]:
    """One question answered three ways: kept, retried with another model, and a longer tangent."""
    session = Session.create(JsonlJournal(path), journal_id="branched")
    session.user("Plan the migration.")
    fork = session.assistant("Step one: back up the database.")
    session.user("And then?")
    first = session.assistant("Then run the first migration.")
    session.branch_from(fork.id, reason="retry with a stronger model")
    session.user("And then? Be exact.")
    second = session.assistant("Then run migrations 1 to 3 in one transaction.")
    session.branch_from(fork.id, reason="explore a tangent")
    session.user("What about the replicas?")
    session.assistant("Pause replication first.")
    tangent = session.assistant("Then resume it after the last migration.")
    session.branch_from(second.id, reason="back to the exact plan")
    session.journal.close()
    return {"fork": fork.id, "first": first.id, "second": second.id, "tangent": tangent.id}


def test_the_graph_has_a_segment_per_branch_with_the_active_path_on_the_left(tmp_path: Path) -> None:
    ids = three_branches(tmp_path / "s.jsonl")
    with JsonlJournal(tmp_path / "s.jsonl", readonly=True) as journal:
        data = page_data(list(journal.read()), verify(journal), journal_id="branched")
    graph = data["graph"]
    trunk, *rest = graph["segments"]
    assert (trunk["count"], trunk["last"], trunk["leaf"], trunk["lane"]) == (2, ids["fork"], False, 0)
    leaves = {s["last"]: s for s in rest}
    assert set(leaves) == {ids["first"], ids["second"], ids["tangent"]}
    assert leaves[ids["second"]]["active"] is True
    assert leaves[ids["second"]]["lane"] == 0  # the active path continues the trunk's lane
    assert {leaves[ids["first"]]["lane"], leaves[ids["tangent"]]["lane"]} == {1, 2}
    assert leaves[ids["tangent"]]["count"] == 3
    at = {s["last"]: i for i, s in enumerate(graph["segments"])}
    assert [(m["from"], m["to"]) for m in graph["moves"]] == [
        (at[ids["first"]], at[ids["fork"]]),
        (at[ids["second"]], at[ids["fork"]]),
        (at[ids["tangent"]], at[ids["second"]]),
    ]
    assert [data["moves"][m["index"]]["reason"] for m in graph["moves"]][-1] == "back to the exact plan"


def test_in_a_browser_the_graph_opens_a_branch_and_two_leaves_compare_with_their_prefix_once(
    tmp_path: Path, browser: object
) -> None:
    from selenium.webdriver.common.by import By

    ids = three_branches(tmp_path / "s.jsonl")
    main(["view", str(tmp_path / "s.jsonl"), "-o", str(tmp_path / "s.html")])
    open_page(browser, (tmp_path / "s.html").as_uri())
    graph = browser.find_element(By.CSS_SELECTOR, "#graph svg.graph")
    leaves = graph.find_elements(By.CSS_SELECTOR, "circle.vertex.leaf")
    assert len(leaves) == 3
    assert [
        c.get_attribute("data-node") for c in graph.find_elements(By.CSS_SELECTOR, "circle.leaf.active")
    ] == [ids["second"]]
    assert len(graph.find_elements(By.CSS_SELECTOR, "path.edge.active")) == 2  # the trunk and the active leaf
    moves = graph.find_elements(By.CSS_SELECTOR, "path.move")
    assert len(moves) == 3
    reasons = [m.find_element(By.TAG_NAME, "title").get_attribute("textContent") for m in moves]
    assert reasons == [
        "leaf move 1: retry with a stronger model",
        "leaf move 2: explore a tangent",
        "leaf move 3: back to the exact plan",
    ]

    graph.find_element(By.CSS_SELECTOR, f'circle[data-node="{ids["tangent"]}"]').click()
    wait_for(browser, "return document.body.dataset.complete === '1'")
    assert browser.execute_script("return document.body.dataset.viewing") == ids["tangent"]
    assert "Pause replication first." in browser.find_element(By.ID, "conversation").text

    compare = browser.find_element(By.ID, "compare")
    assert not compare.is_enabled()
    for leaf in (ids["first"], ids["tangent"]):
        browser.find_element(By.CSS_SELECTOR, f'#branches li[data-leaf="{leaf}"] input.pick').click()
    assert compare.is_enabled()
    compare.click()
    assert browser.execute_script("return document.body.dataset.viewing") == "diff"
    conversation = browser.find_element(By.ID, "conversation")
    assert conversation.find_element(By.CSS_SELECTOR, ".diff-head").text == (
        "comparing two branches: 2 shared entries, then 2 on the left and 3 on the right"
    )
    fork = conversation.find_element(By.CSS_SELECTOR, ".diff-fork")
    assert "Step one: back up the database." in fork.text
    left, right = conversation.find_elements(By.CSS_SELECTOR, ".diff-side")
    assert [
        a.find_element(By.CSS_SELECTOR, ".md").text for a in left.find_elements(By.TAG_NAME, "article")
    ] == [
        "And then?",
        "Then run the first migration.",
    ]
    assert [
        a.find_element(By.CSS_SELECTOR, ".md").text for a in right.find_elements(By.TAG_NAME, "article")
    ] == [
        "What about the replicas?",
        "Pause replication first.",
        "Then resume it after the last migration.",
    ]
    assert conversation.text.count("Plan the migration.") == 0  # the shared beginning is folded, once
    prefix = conversation.find_element(By.CSS_SELECTOR, "details.diff-prefix")
    prefix.find_element(By.TAG_NAME, "summary").click()
    # The browser fires `toggle` as a task after the click: the prefix is filled then, not when the click
    # returns (CI once read the text in between).
    wait_for(browser, "return document.querySelector('details.diff-prefix').dataset.filled === '1'")
    assert conversation.text.count("Plan the migration.") == 1
    assert conversation.text.count("Step one: back up the database.") == 2  # in the prefix and at the fork
    assert severe(browser) == []
