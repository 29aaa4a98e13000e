"""Reading LangGraph checkpoint threads from a `SqliteSaver` database, as data.

The database is opened read-only and read with SQL; each checkpoint is decoded by
`waybook._langgraph` (the safe decoder), which returns plain data and LangChain messages only and refuses
anything else. LangGraph's own serializer is never used: it imports and calls what a checkpoint names.
Decoding msgpack needs `ormsgpack` (installed with `waybook[langgraph]`); LangGraph itself is not needed.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from waybook._langgraph import LangGraphDecodeError, decode_json, decode_typed, plain
from waybook.formats._source_files import RefusedFileError
from waybook.formats._sqlite_source import open_read_only
from waybook.formats.langgraph._import import Checkpoint
from waybook.model import JournalError


class LangGraphDatabaseError(JournalError, ValueError):
    """Not a LangGraph checkpoint database, not the thread asked for, or a checkpoint that is not data."""


_QUERY = (
    "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id"
)

_ISO = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")


def read_thread(path: Path, thread_id: str | None) -> tuple[str, list[Checkpoint]]:
    """(thread id, its root-namespace checkpoints) from a SqliteSaver database.

    With `thread_id` None the database must hold exactly one thread.
    """
    try:
        connection = open_read_only(path, check_same_thread=False)
    except RefusedFileError:
        raise  # not a regular file: it says which, and is no question of format
    except (sqlite3.Error, OSError, ValueError) as exc:
        msg = f"{path}: {exc}; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg) from None
    try:
        query = "SELECT DISTINCT thread_id FROM checkpoints ORDER BY 1"
        threads = [row[0] for row in connection.execute(query)]
        if not all(isinstance(t, str) for t in threads):
            msg = f"{path}: a thread id that is not text; is this a LangGraph SqliteSaver database?"
            raise LangGraphDatabaseError(msg)
        thread = _choose(path, threads, thread_id)
        return thread, [_checkpoint(path, row) for row in connection.execute(_QUERY, (thread,))]
    except sqlite3.Error as exc:
        msg = f"{path}: {exc}; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg) from None
    finally:
        connection.close()


def _checkpoint(path: Path, row: tuple[Any, ...]) -> Checkpoint:
    checkpoint_id, parent, kind, data, metadata = row
    if not isinstance(checkpoint_id, str) or not (parent is None or isinstance(parent, str)):
        msg = f"{path}: a checkpoint id that is not text; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg)
    where = f"{path}: checkpoint {checkpoint_id[:80]}"
    try:
        state = decode_typed(kind, data)
        meta = decode_json(metadata)
    except LangGraphDecodeError as exc:
        msg = f"{where} holds {exc}"
        raise LangGraphDatabaseError(msg) from None
    if not isinstance(state, dict) or not isinstance(meta, dict):
        msg = f"{where} is not a map of channels and metadata; is this a LangGraph SqliteSaver database?"
        raise LangGraphDatabaseError(msg)
    values = state.get("channel_values")
    values = values if isinstance(values, dict) else {}
    messages = values.get("messages")
    messages = messages if isinstance(messages, list) else []
    if not all(_is_message(m) for m in messages):
        msg = f"{where}: its messages channel holds something that is not a LangChain message"
        raise LangGraphDatabaseError(msg)
    return Checkpoint(
        id=checkpoint_id,
        parent=parent or None,
        at=_timestamp(state.get("ts")),
        metadata=plain(meta),
        messages=tuple(messages),
        channels=plain({k: v for k, v in values.items() if k != "messages"}),
    )


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("type"), str) and isinstance(value.get("data"), dict)
    )


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
    if isinstance(value, str) and _ISO.match(value):
        fraction = value[20:23] if len(value) > 19 and value[19] == "." else "000"
        fraction = fraction if fraction.isdigit() and fraction.isascii() else "000"
        return f"{value[:19]}.{fraction.ljust(3, '0')}Z"
    return "1970-01-01T00:00:00.000Z"
