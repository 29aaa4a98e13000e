"""Importing OpenAI Agents SDK session databases written by the SDK itself (fixtures/openai-agents/,
made by its generate.py): items back exactly as the SDK's `get_items` gives them, branch by branch."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import FIXTURES
from waybook.formats._responses import items_of_context
from waybook.formats.openai_agents._database import NotAnAgentsDatabaseError, read_session
from waybook.formats.openai_agents._import import import_openai_agents
from waybook.journal import InMemoryJournal, verify
from waybook.model import GENESIS, LeafMoved
from waybook.projections import TreeProjection, context_at, fold

OPENAI_AGENTS = FIXTURES / "openai-agents"


def imported(
    db: Path, session: str | None = None
) -> tuple[InMemoryJournal, Any, dict[str, list[int]] | None]:
    session_id, rows, branches = read_session(db, session)
    result = import_openai_agents(session_id, rows, branches)
    journal = InMemoryJournal("agents")
    journal.append(list(result.records), expected=GENESIS)
    return journal, result, branches


def items_at(journal: InMemoryJournal, leaf: str | None) -> list[dict[str, Any]]:
    return items_of_context(
        context_at(journal, fold(TreeProjection(), journal.read()), leaf), "openai_agents"
    )


def stored_items(db: Path, session: str, branch: str | None) -> list[dict[str, Any]]:
    """What the SDK's get_items returns, read with SQL as the SDK reads it."""
    with sqlite3.connect(db) as connection:
        if branch is None:
            query = "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id"
            rows = connection.execute(query, (session,)).fetchall()
        else:
            query = (
                "SELECT m.message_data FROM message_structure s JOIN agent_messages m ON s.message_id = m.id "
                "WHERE s.session_id = ? AND s.branch_id = ? ORDER BY s.sequence_number"
            )
            rows = connection.execute(query, (session, branch)).fetchall()
    return [json.loads(data) for (data,) in rows]


def test_a_plain_session_imports_and_gives_back_the_sdks_items_exactly() -> None:
    db = OPENAI_AGENTS / "sqlite-session.db"
    journal, result, _ = imported(db, "support-1")
    assert verify(journal).ok
    assert items_at(journal, result.leaves["main"]) == stored_items(db, "support-1", None)
    assert result.report.mapped == result.report.lines == 5


def test_each_branch_of_an_advanced_session_is_a_branch_with_the_sdks_items() -> None:
    db = OPENAI_AGENTS / "advanced-session.db"
    journal, result, branches = imported(db)
    assert branches is not None
    assert set(result.leaves) == {"main", "retry"}
    for branch, leaf in result.leaves.items():
        assert items_at(journal, leaf) == stored_items(db, "research-1", branch)
    moves = [r.body for r in journal.read() if isinstance(r.body, LeafMoved)]
    assert [m.reason for m in moves][-1].startswith("openai-agents: back to the main branch")
    assert len(fold(TreeProjection(), journal.read()).branches()) == 2


def test_a_database_with_several_sessions_needs_one_chosen(tmp_path: Path) -> None:
    with pytest.raises(NotAnAgentsDatabaseError, match="choose one with --session"):
        read_session(OPENAI_AGENTS / "sqlite-session.db", None)
    with pytest.raises(NotAnAgentsDatabaseError, match="no session 'nope'"):
        read_session(OPENAI_AGENTS / "sqlite-session.db", "nope")
    (tmp_path / "x.db").write_text("not sqlite")
    with pytest.raises(NotAnAgentsDatabaseError):
        read_session(tmp_path / "x.db", None)


def test_the_sdk_itself_reads_the_same_items_it_wrote(tmp_path: Path) -> None:
    agents = pytest.importorskip("agents")
    from agents.extensions.memory import AdvancedSQLiteSession

    db = tmp_path / "advanced.db"
    shutil.copy(OPENAI_AGENTS / "advanced-session.db", db)
    journal, result, _ = imported(db)

    async def sdk_items(branch: str) -> list[Any]:
        session = AdvancedSQLiteSession(session_id="research-1", db_path=db)
        await session.switch_to_branch(branch)
        items = await session.get_items()
        session.close()
        return list(items)

    for branch, leaf in result.leaves.items():
        assert items_at(journal, leaf) == asyncio.run(sdk_items(branch))
    assert agents is not None


def test_the_active_context_is_what_a_reopened_sdk_session_resumes(tmp_path: Path) -> None:
    """The SDK keeps the current branch in memory only: a new AdvancedSQLiteSession starts on 'main'
    (agents/extensions/memory/advanced_sqlite_session.py, `_branch_state = ("main", ...)`), so the
    import's active leaf is main's end, and every other branch stays a branch of its own."""
    pytest.importorskip("agents")
    from agents.extensions.memory import AdvancedSQLiteSession

    db = tmp_path / "advanced.db"
    shutil.copy(OPENAI_AGENTS / "advanced-session.db", db)
    journal, result, _ = imported(db)
    tree = fold(TreeProjection(), journal.read())

    async def resumed() -> list[Any]:
        session = AdvancedSQLiteSession(session_id="research-1", db_path=db)
        try:
            return list(await session.get_items())
        finally:
            session.close()

    assert tree.leaf_id == result.leaves["main"]
    assert items_at(journal, tree.leaf_id) == asyncio.run(resumed())
    others = [leaf for branch, leaf in result.leaves.items() if branch != "main"]
    assert others
    assert all(leaf in tree.index and leaf != tree.leaf_id for leaf in others)
