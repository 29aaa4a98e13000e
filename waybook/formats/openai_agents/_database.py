"""Reading an OpenAI Agents SDK session database (read-only) into rows for `import_openai_agents`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from waybook.formats._sqlite_source import open_read_only
from waybook.formats.openai_agents._import import Row
from waybook.model import JournalError

SESSIONS = "agent_sessions"
MESSAGES = "agent_messages"


class NotAnAgentsDatabaseError(JournalError, ValueError):
    """The file is not an OpenAI Agents SDK session database, or not the session asked for."""


def read_session(path: Path, session_id: str | None) -> tuple[str, list[Row], dict[str, list[int]] | None]:
    """(session id, its rows in order, its branches or None) from an SDK database, opened read-only.

    With `session_id` None the database must hold exactly one session.
    """
    try:
        connection = open_read_only(path)
    except sqlite3.Error as exc:
        msg = f"{path}: cannot open as SQLite ({exc})"
        raise NotAnAgentsDatabaseError(msg) from None
    try:
        return _read(connection, path, session_id)
    except sqlite3.Error as exc:
        msg = f"{path}: {exc}; is this an OpenAI Agents SDK session database?"
        raise NotAnAgentsDatabaseError(msg) from None
    finally:
        connection.close()


def _read(
    connection: sqlite3.Connection, path: Path, session_id: str | None
) -> tuple[str, list[Row], dict[str, list[int]] | None]:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if MESSAGES not in tables:
        msg = f"{path}: no {MESSAGES} table; this is not an OpenAI Agents SDK session database"
        raise NotAnAgentsDatabaseError(msg)
    sessions = [
        row[0] for row in connection.execute(f"SELECT DISTINCT session_id FROM {MESSAGES} ORDER BY 1")
    ]
    if not all(isinstance(session, str) for session in sessions):
        msg = f"{path}: a session_id that is not text; is this an OpenAI Agents SDK session database?"
        raise NotAnAgentsDatabaseError(msg)
    if session_id is None:
        if len(sessions) != 1:
            listed = ", ".join(sessions[:10])
            msg = f"{path} holds {len(sessions)} sessions ({listed}); choose one with --session"
            raise NotAnAgentsDatabaseError(msg)
        session_id = sessions[0]
    elif session_id not in sessions:
        msg = f"{path} has no session {session_id!r}; it holds {', '.join(sessions[:10]) or 'none'}"
        raise NotAnAgentsDatabaseError(msg)
    rows = [
        Row(id=row_id, data=data, created_at=created if isinstance(created, str) else None)
        for row_id, data, created in connection.execute(
            f"SELECT id, message_data, created_at FROM {MESSAGES} WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
    ]
    branches: dict[str, list[int]] | None = None
    if "message_structure" in tables:
        branches = {}
        for message_id, branch in connection.execute(
            "SELECT message_id, branch_id FROM message_structure WHERE session_id = ? "
            "ORDER BY sequence_number, id",
            (session_id,),
        ):
            if not isinstance(branch, str) or type(message_id) is not int:
                msg = (
                    f"{path}: a message_structure row whose branch_id is not text or message_id not a number"
                )
                raise NotAnAgentsDatabaseError(msg)
            branches.setdefault(branch, []).append(message_id)
        branches = branches or None
    if not all(type(row.id) is int for row in rows):
        msg = f"{path}: an agent_messages id that is not a number; is this an OpenAI Agents SDK database?"
        raise NotAnAgentsDatabaseError(msg)
    return session_id, rows, branches
