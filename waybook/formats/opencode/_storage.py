"""Reading OpenCode's storage, as data: its JSON folder or its SQLite database, read-only.

OpenCode (anomalyco/opencode, packages/opencode/src/storage/ and session/session.sql.ts) keeps a session
as `storage/session/<project>/<session>.json`, its messages as `storage/message/<session>/<msg>.json` and
each message's parts as `storage/part/<msg>/<part>.json`; newer versions keep the same objects in SQLite
tables `session`, `message` (id, session_id, time_created, data) and `part` (id, message_id, session_id,
data), a row's JSON `data` plus its id columns making the object (`info(row)`, `part(row)` there).
Messages are read in id order (OpenCode's ids ascend), parts by id within their message.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Final

import attrs

from waybook.formats._foreign import ForeignFormatError

SOURCE: Final = "opencode"
MAX_FILE: Final = 64 << 20


@attrs.frozen
class Stored:
    session: dict[str, Any]
    messages: tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]
    """(message info, its parts), in order."""


class NotAnOpenCodeStorageError(ForeignFormatError):
    def __init__(self, path: Path, why: str) -> None:
        super().__init__(SOURCE, [(1, f"{path}: {why}")], unit="item")


def read_opencode(path: Path, session_id: str | None) -> Stored:
    """One session of an OpenCode storage folder (or the `storage` folder's parent) or database."""
    if path.is_file():
        return _from_database(path, session_id)
    root = path / "storage" if (path / "storage" / "session").is_dir() else path
    if not (root / "session").is_dir():
        raise NotAnOpenCodeStorageError(path, "no session/ folder: not an OpenCode storage folder")
    sessions = {p.stem: p for p in sorted((root / "session").glob("*/*.json"))}
    chosen = _choose(path, sorted(sessions), session_id)
    session = _object(sessions[chosen])
    messages = []
    for message_path in sorted((root / "message" / chosen).glob("*.json")):
        info = _object(message_path)
        parts = tuple(_object(p) for p in sorted((root / "part" / message_path.stem).glob("*.json")))
        messages.append((info, parts))
    return Stored(session=session, messages=tuple(messages))


def _choose(path: Path, ids: list[str], wanted: str | None) -> str:
    if wanted is not None:
        if wanted not in ids:
            raise NotAnOpenCodeStorageError(path, f"no session {wanted!r} (it holds {', '.join(ids[:10])})")
        return wanted
    if len(ids) != 1:
        shown = ", ".join(ids[:10]) or "none"
        raise NotAnOpenCodeStorageError(path, f"{len(ids)} sessions ({shown}); choose one with --session")
    return ids[0]


def _object(path: Path) -> dict[str, Any]:
    if path.stat().st_size > MAX_FILE:
        raise NotAnOpenCodeStorageError(path, f"larger than {MAX_FILE} bytes")
    return _decoded(path.read_bytes(), str(path))


def _decoded(data: bytes | str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise NotAnOpenCodeStorageError(Path(where), f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise NotAnOpenCodeStorageError(Path(where), "not a JSON object")
    return value


def _from_database(path: Path, session_id: str | None) -> Stored:
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise NotAnOpenCodeStorageError(path, f"cannot be opened read-only ({exc})") from None
    try:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"session", "message", "part"} <= tables:
            raise NotAnOpenCodeStorageError(path, "no session, message and part tables: not OpenCode's db")
        ids = [r[0] for r in connection.execute("SELECT id FROM session ORDER BY id")]
        chosen = _choose(path, ids, session_id)
        (session_row,) = connection.execute("SELECT * FROM session WHERE id = ?", (chosen,)).fetchall()
        names = [d[0] for d in connection.execute("SELECT * FROM session LIMIT 0").description]
        session = {k: v for k, v in zip(names, session_row, strict=True) if isinstance(v, str | int | float)}
        messages = []
        rows = connection.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (chosen,)
        ).fetchall()
        for message_id, data in rows:
            info = {**_decoded(data, f"{path}: message {message_id}"), "id": message_id, "sessionID": chosen}
            parts = tuple(
                {**_decoded(d, f"{path}: part {part_id}"), "id": part_id, "messageID": message_id}
                for part_id, d in connection.execute(
                    "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,)
                )
            )
            messages.append((info, parts))
    except sqlite3.Error as exc:
        raise NotAnOpenCodeStorageError(path, f"cannot be read ({exc})") from None
    finally:
        connection.close()
    return Stored(session=session, messages=tuple(messages))
