"""Which foreign format a file is in, from its content (its first lines, or a database's tables).

`detect_format(path)` reads at most the first 64 KiB of a JSONL file, as data, and a SQLite database
read-only; None when no format fits (or the path is not a regular file: a FIFO is never waited on).
`detect_folder_format(path)` does the same for a folder. Used by `waybook import auto` and by read
commands to say which import command would read a foreign file.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Final

from waybook.formats._source_files import RefusedFileError, read_regular
from waybook.formats._sqlite_source import open_read_only
from waybook.formats.opencode import is_storage_folder

SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_PEEK: Final = 64 << 10
_FOLDER_CANDIDATES: Final = 20


def detect_format(path: Path) -> str | None:
    """`pi`, `claude-code`, `codex`, `openai-agents`, `langgraph`, `opencode` (its database), or None."""
    try:
        head = read_regular(path, head=_PEEK)
    except RefusedFileError:
        return None
    if head.startswith(SQLITE_MAGIC):
        return _database_format(path)
    objects = list(_objects(head))
    if not objects:
        return None
    first = objects[0]
    if first.get("type") == "session" and isinstance(first.get("id"), str):
        return "pi"
    if any(o.get("type") == "session_meta" for o in objects) or (
        isinstance(first.get("payload"), dict) and "timestamp" in first and first.get("type") == "event_msg"
    ):
        return "codex"
    if any(isinstance(o.get("sessionId"), str) and o.get("type") in ("user", "assistant") for o in objects):
        return "claude-code"
    return None


def detect_folder_format(path: Path) -> str | None:
    """`opencode` for an OpenCode storage folder; else the format of the first of the folder's first 20
    JSONL files (in path order) that has one; None when none has."""
    if is_storage_folder(path):
        return "opencode"
    for candidate in sorted(path.rglob("*.jsonl"))[:_FOLDER_CANDIDATES]:
        found = detect_format(candidate)
        if found is not None:
            return found
    return None


def _objects(head: bytes) -> list[dict[str, Any]]:
    out = []
    for line in head.split(b"\n")[:200]:
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


def _database_format(path: Path) -> str | None:
    try:
        connection = open_read_only(path)
    except (sqlite3.Error, RefusedFileError):  # a file beside it SQLite must not open: no format here
        return None
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    if "agent_messages" in tables:
        return "openai-agents"
    if "checkpoints" in tables:
        return "langgraph"
    if {"session", "message", "part"} <= tables:
        return "opencode"
    return None


def import_hint(path: Path) -> str:
    """' It looks like ...: read it with `waybook import FORMAT PATH -o OUT`.' or ''."""
    found = detect_format(path)
    if found is None:
        return ""
    return f" It looks like a {found} session: import it with `waybook import {found} {path} -o OUT.jsonl`."
