"""`waybook verify --store URL` on a big store (issue 50): the journals are listed a page at a time, each
report written as it is made, a progress bar with --progress even off a terminal, and sub-agent links
checked with a bounded memory of the journals read before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runner import waybook
from waybook import Session
from waybook.journal import ToolCallBlock
from waybook.projections import SubagentParent
from waybook.stores import CATALOG_ID, open_store


def store_of(tmp_path: Path, journals: int) -> str:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        for n in range(journals):
            Session(store.create(f"j{n:03d}")).user(f"question {n}")
        store.hide("j001", reason="kept out of the listing, not out of verify")
    return url


def test_verify_store_with_progress_draws_its_bar_on_a_stderr_that_is_not_a_terminal(tmp_path: Path) -> None:
    url = store_of(tmp_path, 3)
    shown = waybook("verify", "--store", url, "--progress")
    assert shown.returncode == 0
    assert "verifying" in shown.stderr
    quiet = waybook("verify", "--store", url)
    assert quiet.returncode == 0
    assert "verifying" not in quiet.stderr  # no terminal, no --progress: no bar


def test_verify_store_json_is_one_array_with_emit_jsons_bytes_every_journal_then_the_catalog(
    tmp_path: Path,
) -> None:
    url = store_of(tmp_path, 5)
    ran = waybook("verify", "--store", url, "--json")
    assert ran.returncode == 0
    reports = json.loads(ran.stdout)
    assert [r["path"] for r in reports] == [f"j{n:03d}" for n in range(5)] + [CATALOG_ID]
    assert ran.stdout == json.dumps(reports, sort_keys=True, ensure_ascii=False) + "\n"


def test_a_sub_agent_verified_long_after_its_parent_still_has_its_link_checked_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("waybook.commands.verify_links.KEPT_FACTS", 1)  # every fact read again
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        parent = Session(store.create("parent"))
        parent.user("research this")
        call = parent.assistant(
            [ToolCallBlock(call_id="task-1", name="task", arguments={"prompt": "look it up"})],
            stop_reason="tool_use",
        )
        for n in range(3):  # journals between the parent and its sub-agent
            Session(store.create(f"between-{n}")).user("unrelated")
        meta = SubagentParent("parent", call.id, "task-1").metadata()
        Session(store.create("child", metadata=meta)).user("look it up")
        parent.link_subagent("child", at=call.id, call_id="task-1")
        Session(store.create("late", metadata=SubagentParent("gone", call.id, "t").metadata())).user("x")
    ran = waybook("verify", "--store", url, "--json")
    reports = {r["path"]: r for r in json.loads(ran.stdout)}
    assert reports["parent"]["links"] == {"links": 1, "parent": None, "problems": [], "notes": []}
    assert reports["child"]["links"]["problems"] == []
    assert [p["kind"] for p in reports["late"]["links"]["problems"]] == ["missing"]
    assert ran.returncode == 1  # the one sub-agent whose parent is missing
