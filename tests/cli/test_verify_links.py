"""Sub-agent links are two-way and `waybook verify --store URL` checks both ends (issue 41): a link whose
journal is missing or names another parent, and a sub-agent whose parent is missing or records no link
back, are problems (exit 1); a link to a sub-agent written before links were two-way is a note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from tests.helpers.paths import SHARED_FIXTURES
from waybook import Session
from waybook.model import InvalidRecordError, ToolCallBlock
from waybook.projections import SUBAGENT_OF, SubagentParent
from waybook.stores import JournalStore, open_store


def store_url(tmp_path: Path) -> str:
    return f"file:{tmp_path}/store"


def parent_with_a_call(store: JournalStore) -> tuple[Session, str]:
    parent = Session(store.create("parent"))
    parent.user("research this")
    call = parent.assistant(
        [ToolCallBlock(call_id="task-1", name="task", arguments={"prompt": "look it up"})],
        stop_reason="tool_use",
    )
    return parent, call.id


def child(store: JournalStore, journal_id: str, parent: SubagentParent | None) -> None:
    metadata = {} if parent is None else parent.metadata()
    session = Session(store.create(journal_id, metadata=metadata))
    session.user("look it up")


def verify(url: str, *ids: str) -> tuple[int, list[dict[str, object]], str]:
    ran = waybook("verify", "--store", url, *ids, "--json")
    return ran.returncode, json.loads(ran.stdout), ran.stderr


def links_of(reports: list[dict[str, object]], journal: str) -> dict[str, object]:
    (entry,) = [r for r in reports if r["path"] == journal]
    links = entry["links"]
    assert isinstance(links, dict)
    return links


def test_a_two_way_link_verifies(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        parent, node = parent_with_a_call(store)
        child(store, "child", SubagentParent("parent", node, "task-1"))
        parent.link_subagent("child", at=node, call_id="task-1")
    status, reports, _ = verify(url)
    assert status == 0
    assert links_of(reports, "parent") == {"links": 1, "parent": None, "problems": [], "notes": []}
    assert links_of(reports, "child")["parent"] == "parent"


def test_a_link_whose_journal_is_missing_fails_verify(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        parent, node = parent_with_a_call(store)
        parent.link_subagent("never-written", at=node, call_id="task-1")
    status, reports, _ = verify(url, "parent")
    assert status == 1  # today: 0, the link is never checked
    (problem,) = links_of(reports, "parent")["problems"]  # type: ignore[misc]
    assert problem["kind"] == "missing"
    assert "'never-written', which is not there" in problem["message"]
    ran = waybook("verify", "--store", url, "parent")
    assert "link: seq 4 links sub-agent journal 'never-written', which is not there" in ran.stdout


def test_a_link_to_a_journal_that_names_another_parent_fails_verify(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        parent, node = parent_with_a_call(store)
        child(store, "child", SubagentParent("someone-else", "n1"))
        child(store, "someone-else", None)
        parent.link_subagent("child", at=node, call_id="task-1")
    status, reports, _ = verify(url, "parent")
    assert status == 1
    (problem,) = links_of(reports, "parent")["problems"]  # type: ignore[misc]
    assert problem["kind"] == "different"
    assert "names journal 'someone-else'" in problem["message"]


def test_a_sub_agent_whose_parent_is_missing_or_does_not_link_back_fails_verify(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        _parent, node = parent_with_a_call(store)
        child(store, "orphan", SubagentParent("gone", "n1", "c1"))
        child(store, "unlinked", SubagentParent("parent", node, "task-1"))
    status, reports, _ = verify(url)
    assert status == 1
    (orphan,) = links_of(reports, "orphan")["problems"]  # type: ignore[misc]
    assert orphan["kind"] == "missing"
    (unlinked,) = links_of(reports, "unlinked")["problems"]  # type: ignore[misc]
    assert unlinked["kind"] == "different"
    assert "records no link back" in unlinked["message"]


def test_a_one_way_link_written_before_links_were_two_way_is_a_note(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        parent, node = parent_with_a_call(store)
        child(store, "child", None)
        parent.link_subagent("child", at=node, call_id="task-1")
    status, reports, _ = verify(url, "parent")
    assert status == 0
    (note,) = links_of(reports, "parent")["notes"]  # type: ignore[misc]
    assert note["kind"] == "one-way"


def test_a_header_naming_a_parent_says_it_in_metadata() -> None:
    named = SubagentParent("parent", "n1", "c1").metadata()
    assert named == {SUBAGENT_OF: {"journal": "parent", "node": "n1", "call_id": "c1"}}
    assert SubagentParent("parent", "n1").metadata() == {SUBAGENT_OF: {"journal": "parent", "node": "n1"}}


CLAUDE = SHARED_FIXTURES / "claude-code"
WITH_AGENTS = [
    CLAUDE / "codemie" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",  # its agents beside it
    CLAUDE / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl",  # its agents in SESSION/subagents
]


@pytest.mark.skipif(not CLAUDE.is_dir(), reason="shared/fixtures is not beside this checkout")
@pytest.mark.parametrize("session", WITH_AGENTS, ids=lambda p: p.parent.name)
def test_an_imported_session_and_its_sub_agents_link_both_ways(tmp_path: Path, session: Path) -> None:
    url = store_url(tmp_path)
    ran = waybook("import", "claude-code", session, "--store", url, "-o", "s")
    assert ran.returncode == 0, ran.stderr
    status, reports, _ = verify(url)
    assert status == 0, reports
    linked = [r for r in reports if "links" in r]
    children = [r for r in linked if links_of(reports, str(r["path"]))["parent"] == "s"]
    assert children, "every imported sub-agent names its parent"
    assert all(not links_of(reports, str(r["path"]))["notes"] for r in linked), "no link is one-way"


def test_start_subagent_writes_both_ends_and_verify_proves_them(tmp_path: Path) -> None:
    url = store_url(tmp_path)
    with open_store(url) as store:
        parent, node = parent_with_a_call(store)
        sub = parent.start_subagent(
            store.create("researcher", header=False),
            journal_id="researcher",
            call_id="task-1",
            agent="Explore",
        )
        sub.user("looking it up")
        header = next(iter(store.open("researcher").read())).body
        assert header.metadata[SUBAGENT_OF] == {"journal": "parent", "node": node, "call_id": "task-1"}  # type: ignore[union-attr]
        link = list(store.open("parent").read())[-1].body
        assert (link.journal, link.node, link.call_id, link.agent) == (
            "researcher",
            node,
            "task-1",
            "Explore",
        )  # type: ignore[union-attr]
    status, reports, _ = verify(url)
    assert status == 0
    assert links_of(reports, "parent")["notes"] == []
    assert links_of(reports, "researcher")["parent"] == "parent"


def test_the_async_session_starts_a_sub_agent_both_ways_too(tmp_path: Path) -> None:
    import asyncio

    from waybook import AsyncSession, InMemoryJournal

    parent_journal, child_journal = InMemoryJournal("parent"), InMemoryJournal("child")

    async def scenario() -> None:
        parent = await AsyncSession.create(parent_journal, journal_id="parent")
        await parent.user("go")
        sub = await parent.start_subagent(child_journal, journal_id="child", call_id="c1")
        await sub.user("sub-task")
        with pytest.raises(InvalidRecordError, match="empty journal"):
            await parent.start_subagent(child_journal, journal_id="child")

    asyncio.run(scenario())
    header = next(iter(child_journal.read())).body
    assert header.metadata[SUBAGENT_OF]["journal"] == "parent"  # type: ignore[union-attr]
    assert list(parent_journal.read())[-1].body.journal == "child"  # type: ignore[union-attr]
