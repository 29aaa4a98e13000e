"""Reading LangGraph checkpoint threads from a `SqliteSaver` database with LangGraph's own saver.

LangGraph's checkpoints are serialized by its own serializer, so reading them needs LangGraph: install
`waybook[langgraph]`. The database is opened read-only.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from waybook.formats.langgraph._import import Checkpoint
from waybook.model._errors import JournalError


class LangGraphDatabaseError(JournalError, ValueError):
    """Not a LangGraph checkpoint database, not the thread asked for, or LangGraph is not installed."""


def read_thread(path: Path, thread_id: str | None) -> tuple[str, list[Checkpoint]]:
    """(thread id, its root-namespace checkpoints) from a SqliteSaver database.

    With `thread_id` None the database must hold exactly one thread.
    """
    try:
        from langchain_core.messages import message_to_dict
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError:
        msg = "reading LangGraph checkpoints needs LangGraph: pip install 'waybook[langgraph]'"
        raise LangGraphDatabaseError(msg) from None
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        msg = f"{path}: {exc}; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg) from None
    try:
        query = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1"
        threads = [row[0] for row in connection.execute(query)]
        return _read(SqliteSaver(connection), message_to_dict, _choose(path, threads, thread_id))
    except sqlite3.Error as exc:
        msg = f"{path}: {exc}; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg) from None
    finally:
        connection.close()


def _read(saver: Any, message_to_dict: Any, thread: str) -> tuple[str, list[Checkpoint]]:
    checkpoints = []
    for item in saver.list({"configurable": {"thread_id": thread, "checkpoint_ns": ""}}):
        values = item.checkpoint.get("channel_values", {})
        parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        checkpoints.append(
            Checkpoint(
                id=item.config["configurable"]["checkpoint_id"],
                parent=parent,
                at=_timestamp(item.checkpoint.get("ts")),
                metadata=_json_safe(item.metadata),
                messages=tuple(message_to_dict(m) for m in values.get("messages", [])),
                channels=_json_safe({k: v for k, v in values.items() if k != "messages"}),
            )
        )
    return thread, checkpoints


def _choose(path: Path, threads: list[str], thread_id: str | None) -> str:
    if thread_id is None:
        if len(threads) != 1:
            listed = ", ".join(threads[:10])
            msg = f"{path} holds {len(threads)} threads ({listed}); choose one with --thread"
            raise LangGraphDatabaseError(msg)
        return threads[0]
    if thread_id not in threads:
        msg = f"{path} has no thread {thread_id!r}; it holds {', '.join(threads[:10]) or 'none'}"
        raise LangGraphDatabaseError(msg)
    return thread_id


def _timestamp(value: Any) -> str:
    """LangGraph's ISO timestamp (`2026-12-01T11:06:00.123456+00:00`) as RFC 3339 UTC, milliseconds."""
    if isinstance(value, str) and len(value) >= 19 and value[10] == "T":
        fraction = value[20:23] if len(value) > 19 and value[19] == "." else "000"
        return f"{value[:19]}.{fraction.ljust(3, '0')}Z"
    return "1970-01-01T00:00:00.000Z"


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=repr))
