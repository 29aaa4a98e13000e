"""Reading OpenCode's storage, as data: its JSON folder or its SQLite database, read-only.

OpenCode (anomalyco/opencode, packages/opencode/src/storage/ and session/session.sql.ts) keeps a session
as `storage/session/<project>/<session>.json`, its messages as `storage/message/<session>/<msg>.json` and
each message's parts as `storage/part/<msg>/<part>.json`; newer versions keep the same objects in SQLite
tables `session` (its `parent_id` column), `message` (id, session_id, time_created, data) and `part` (id,
message_id, session_id, data), a row's JSON `data` plus its id columns making the object (`info(row)`,
`part(row)` there). Messages are read in id order (OpenCode's ids ascend), parts by id within their
message.

A session OpenCode's task tool started names its parent (`parentID`, the `parent_id` column): the
session read comes with its sub-agent sessions (`Stored.children`, each with its own). Without a session
chosen, the storage's one session that no other started is read.

A file or row that is not a JSON object is an error naming it; with `lenient` it is skipped and listed
in `Stored.skipped`.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import attrs

from waybook.formats._foreign import ForeignFormatError, NotThisFormatError
from waybook.formats._source_files import RefusedFileError, read_regular
from waybook.formats._sqlite_source import open_read_only

T = TypeVar("T")
SOURCE: Final = "opencode"
MAX_FILE: Final = 64 << 20
MAX_DEPTH: Final = 32
"""Sub-agent sessions nested deeper than this are not followed (a cycle of parent links stops too)."""


@attrs.frozen
class Stored:
    session: dict[str, Any]
    messages: tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]
    """(message info, its parts), in order."""
    children: tuple[Stored, ...] = ()
    """The sessions this one's task tool started, each with its own."""
    skipped: tuple[tuple[int, str], ...] = ()
    """(item number, why) for each file or row skipped under `lenient`."""

    @property
    def id(self) -> str:
        return str(self.session.get("id", "session"))


class NotAnOpenCodeStorageError(NotThisFormatError):
    """The path is not an OpenCode storage folder or database at all."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(SOURCE, f"{path}: {why}")


class OpenCodeStorageError(ForeignFormatError):
    """An OpenCode storage that cannot be imported as asked: a damaged file or row, or no session
    chosen where several could be meant."""

    def __init__(self, path: Path | str, why: str, *, choose: bool = False) -> None:
        super().__init__(SOURCE, [(1, f"{path}: {why}")], unit="item")
        if choose:  # not damage: --lenient would not help
            self.args = (f"{path}: {why}; nothing was written",)


class _Skips:
    def __init__(self, lenient: bool) -> None:
        self.lenient = lenient
        self.items = 0
        self.skipped: list[tuple[int, str]] = []

    def read(self, load: Callable[[T], dict[str, Any]], source: T) -> dict[str, Any] | None:
        self.items += 1
        try:
            return load(source)
        except OpenCodeStorageError as exc:
            if not self.lenient:
                raise
            self.skipped.append((self.items, exc.problems[0][1]))
            return None


def read_opencode(path: Path, session_id: str | None, *, lenient: bool = False) -> Stored:
    """One session (with its sub-agent sessions) of an OpenCode storage folder (or the `storage`
    folder's parent) or database."""
    if path.exists() and not path.is_dir():  # a database (open_read_only refuses all but a regular file)
        return _from_database(path, session_id, _Skips(lenient))
    root = _storage_root(path)
    if root is None:
        raise NotAnOpenCodeStorageError(path, "no session/ folder: not an OpenCode storage folder")
    skips = _Skips(lenient)
    read = functools.partial(_object, home=root)
    sessions: dict[str, dict[str, Any]] = {}
    for file in sorted((root / "session").glob("*/*.json")):
        found = skips.read(read, file)
        if found is not None:
            sessions.setdefault(file.stem, {"id": file.stem, **found})
    chosen = _choose(path, sessions, session_id)

    def load(sid: str) -> tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]:
        messages = []
        for file in sorted((root / "message" / sid).glob("*.json")):
            info = skips.read(read, file)
            if info is None:
                continue
            parts = []
            for part_file in sorted((root / "part" / file.stem).glob("*.json")):
                part = skips.read(read, part_file)
                if part is not None:
                    parts.append({"id": part_file.stem, **part})
            messages.append(({"id": file.stem, **info}, tuple(parts)))
        return tuple(messages)

    return _tree(chosen, sessions, load, skips)


def is_storage_folder(path: Path) -> bool:
    """Whether `path` is an OpenCode storage folder (or the folder holding its `storage` folder)."""
    return _storage_root(path) is not None


def _storage_root(path: Path) -> Path | None:
    for root in (path / "storage", path):
        if (root / "session").is_dir():
            return root
    return None


def _tree(
    chosen: str,
    sessions: dict[str, dict[str, Any]],
    load: Callable[[str], tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]],
    skips: _Skips,
) -> Stored:
    seen: set[str] = set()
    by_parent: dict[str | None, list[str]] = {}  # each session's children in id order, found once
    for sid in sorted(sessions):
        by_parent.setdefault(_parent(sessions[sid]), []).append(sid)

    def build(sid: str, depth: int) -> Stored:
        seen.add(sid)
        kids = [k for k in by_parent.get(sid, ()) if k not in seen]
        children = tuple(build(k, depth + 1) for k in kids if depth < MAX_DEPTH and k not in seen)
        return Stored(session=sessions[sid], messages=load(sid), children=children)

    top = build(chosen, 0)
    return attrs.evolve(top, skipped=tuple(skips.skipped))


def _parent(session: dict[str, Any]) -> str | None:
    parent = session.get("parentID", session.get("parent_id"))
    return parent if isinstance(parent, str) else None


def _choose(path: Path, sessions: dict[str, dict[str, Any]], wanted: str | None) -> str:
    ids = sorted(sessions)
    if wanted is not None:
        if wanted not in sessions:
            raise OpenCodeStorageError(
                path, f"no session {wanted!r} (it holds {', '.join(ids[:10]) or 'none'})", choose=True
            )
        return wanted
    roots = [sid for sid in ids if _parent(sessions[sid]) not in sessions]
    if len(roots) != 1:
        shown = ", ".join(roots[:10]) or "none"
        raise OpenCodeStorageError(
            path,
            f"{len(roots)} sessions that no other started ({shown}); choose one with --session",
            choose=True,
        )
    return roots[0]


def _object(path: Path, *, home: Path) -> dict[str, Any]:
    """A file of the storage folder `home`, read as `read_regular` reads (a regular file inside it)."""
    try:
        data = read_regular(path, inside=home, where="storage folder", limit=MAX_FILE)
    except RefusedFileError as exc:
        raise OpenCodeStorageError(path, exc.why) from None
    return _decoded(data, str(path))


def _decoded(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, bytes | str):
        raise OpenCodeStorageError(where, f"its data is {type(data).__name__}, not JSON text")
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise OpenCodeStorageError(where, f"not JSON ({str(exc)[:200]})") from None
    if not isinstance(value, dict):
        raise OpenCodeStorageError(where, "not a JSON object")
    return value


def _from_database(path: Path, session_id: str | None, skips: _Skips) -> Stored:
    try:
        connection = open_read_only(path)
    except sqlite3.Error as exc:
        raise NotAnOpenCodeStorageError(path, f"cannot be opened read-only ({exc})") from None
    try:
        try:
            tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise NotAnOpenCodeStorageError(path, f"not an SQLite database ({exc})") from None
        if not {"session", "message", "part"} <= tables:
            raise NotAnOpenCodeStorageError(path, "no session, message and part tables: not OpenCode's db")
        names = [d[0] for d in connection.execute("SELECT * FROM session LIMIT 0").description]
        sessions: dict[str, dict[str, Any]] = {}
        for row in connection.execute("SELECT * FROM session ORDER BY id"):
            values = dict(zip(names, row, strict=True))
            if isinstance(values.get("id"), str):
                kept = {k: v for k, v in values.items() if isinstance(v, str | int | float)}
                sessions[values["id"]] = kept
        chosen = _choose(path, sessions, session_id)

        def load(sid: str) -> tuple[tuple[dict[str, Any], tuple[dict[str, Any], ...]], ...]:
            messages = []
            rows = connection.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (sid,)
            ).fetchall()
            for message_id, data in rows:
                info = skips.read(functools.partial(_decoded, where=f"{path}: message {message_id}"), data)
                if info is None:
                    continue
                parts = []
                for part_id, pdata in connection.execute(
                    "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,)
                ).fetchall():
                    part = skips.read(functools.partial(_decoded, where=f"{path}: part {part_id}"), pdata)
                    if part is not None:
                        parts.append({**part, "id": part_id, "messageID": message_id, "sessionID": sid})
                messages.append(({**info, "id": message_id, "sessionID": sid}, tuple(parts)))
            return tuple(messages)

        return _tree(chosen, sessions, load, skips)
    except sqlite3.Error as exc:
        raise OpenCodeStorageError(path, f"cannot be read ({exc})") from None
    finally:
        connection.close()
