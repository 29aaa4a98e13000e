"""`open_store(url)`: a store from its URL.

    memory:                 a new InProcessStore (this process only)
    file:DIR                a DirectoryStore (created if missing); also file:///abs/dir
    sqlite:FILE             a SqliteStore (created if missing); also sqlite:///abs/file.db
    postgresql://...        a PostgreSQL store (the `postgresql` extra); ?pool_size=N&retry_for=SECONDS
Options go in the query string: `?durability=fsync` (file, sqlite), `?busy_timeout=30` (sqlite).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Final

from waybook.model import JournalError
from waybook.stores._errors import InvalidStoreUrlError, StoreNotFoundError
from waybook.stores._protocol import JournalStore

Opener = Callable[[str, dict[str, str]], JournalStore]
"""`(location, options) -> store`: the location is the URL after its scheme (or the whole URL)."""


def _open_memory(location: str, options: dict[str, str]) -> JournalStore:
    from waybook.stores._in_process import InProcessStore

    _no_options("memory:", options, allowed=())
    return InProcessStore()


def _open_directory(location: str, options: dict[str, str]) -> JournalStore:
    from waybook.stores._directory import SNAPSHOT_TAIL, DirectoryStore

    _no_options("file:", options, allowed=("durability", "snapshot_tail"))
    durability = _durability_option("file:", options.get("durability", "group"))
    tail = options.get("snapshot_tail", str(SNAPSHOT_TAIL))
    if not (tail.isascii() and tail.isdigit() and len(tail) < 19):
        msg = f"file: store URL has snapshot_tail={tail[:40]!r}; use a whole number from 0"
        raise InvalidStoreUrlError(msg)
    return DirectoryStore(_local_path("file:", location), durability=durability, snapshot_tail=int(tail))


def _open_sqlite(location: str, options: dict[str, str]) -> JournalStore:
    from waybook.stores._sqlite import BUSY_TIMEOUT, SqliteStore

    _no_options("sqlite:", options, allowed=("durability", "busy_timeout"))
    timeout = options.get("busy_timeout")
    return SqliteStore(
        _local_path("sqlite:", location),
        durability=_durability_option("sqlite:", options.get("durability", "fsync")),
        busy_timeout=BUSY_TIMEOUT if timeout is None else seconds_option(timeout),
    )


def _open_postgres(location: str, options: dict[str, str]) -> JournalStore:
    try:
        from waybook.stores.postgres import open_postgres
    except ImportError as exc:
        msg = f"{_public(location)}: the PostgreSQL store needs psycopg: pip install 'waybook[postgresql]'"
        raise InvalidStoreUrlError(msg) from exc
    try:
        parts = urllib.parse.urlsplit(location)
        parts.port  # noqa: B018 (urllib checks the port when it is read)
    except ValueError as exc:
        shown = _public_or_scheme(location)
        msg = f"{shown}: {exc}; use postgresql://USER@HOST:PORT/DATABASE (port 1 to 65535)"
        raise InvalidStoreUrlError(msg) from None
    return open_postgres(location)


def _public_or_scheme(url: str) -> str:
    try:
        return _public(url)
    except ValueError:
        return url.partition(":")[0] + "://..."


def _public(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"


OPENERS: Final[dict[str, Opener]] = {
    "memory": _open_memory,
    "file": _open_directory,
    "sqlite": _open_sqlite,
    "postgresql": _open_postgres,
    "postgres": _open_postgres,
}
"""Schemes `open_store` knows. A store module adds its own (PostgreSQL: "postgresql", "postgres")."""


def open_store(url: str, *, create: bool = True) -> JournalStore:
    """Open the store at `url` (see the module docstring). Raises InvalidStoreUrlError for a URL it
    cannot open, and the store's own errors (StorageError, ...) for one it cannot reach.

    A `file:` or `sqlite:` store that does not exist yet is created, unless `create=False`: then
    StoreNotFoundError, and nothing is created (a reader never makes a store by mistake)."""
    if type(url) is not str or ":" not in url:
        msg = (
            f"{url!r} is not a store URL; use file:DIR (a directory of JSONL journals), sqlite:FILE, "
            "postgresql://... or memory:"
        )
        raise InvalidStoreUrlError(msg)
    scheme, _, rest = url.partition(":")
    opener = OPENERS.get(scheme.lower())
    if opener is None:
        known = ", ".join(f"{s}:" for s in OPENERS)
        msg = f"{url!r}: unknown store scheme {scheme!r}; known schemes are {known}"
        raise InvalidStoreUrlError(msg)
    if not create:
        _refuse_missing(url)
    if scheme.lower() in ("postgresql", "postgres"):
        return opener(url, {})
    location, _, query = rest.partition("?")
    if "\x00" in urllib.parse.unquote(location):
        msg = f"{scheme}: store URL has a NUL character in its path; no file system path holds one"
        raise InvalidStoreUrlError(msg)
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        msg = f"{url!r}: the options after '?' are not name=value pairs joined by '&'"
        raise InvalidStoreUrlError(msg) from exc
    try:
        return opener(urllib.parse.unquote(location), dict(pairs))
    except JournalError:  # the store's own typed errors (StorageError is an OSError) say it already
        raise
    except OSError as exc:  # a path the system refuses outright (too long, a loop of links)
        msg = f"{scheme}:{location[:80]}{'...' if len(location) > 80 else ''}: {exc.strerror or exc}"
        raise InvalidStoreUrlError(msg) from None


def local_path(url: str) -> Path | None:
    """The file or directory a `file:` or `sqlite:` store URL names, read as `open_store` reads it
    (options after `?` dropped, percent-escapes undone, `//localhost/` allowed); None for other
    schemes or a URL `open_store` would refuse."""
    scheme, _, rest = url.partition(":")
    if scheme.lower() not in ("file", "sqlite"):
        return None
    try:
        return Path(_local_path(f"{scheme.lower()}:", urllib.parse.unquote(rest.partition("?")[0])))
    except InvalidStoreUrlError:
        return None


def _refuse_missing(url: str) -> None:
    """StoreNotFoundError if `url` names a local store that is not there (other stores are reached)."""
    location = local_path(url)
    if location is None:
        return
    if url.partition(":")[0].lower() == "file":
        from waybook.stores._directory import CATALOG_FILE, is_directory_store

        if not is_directory_store(location):
            raise StoreNotFoundError(url=url, reason=f"no directory store there (no {CATALOG_FILE})")
    elif not location.is_file():
        raise StoreNotFoundError(url=url, reason="no SQLite store there")


def _local_path(scheme: str, location: str) -> str:
    if location.startswith("//"):
        host, _, path = location[2:].partition("/")
        if host not in ("", "localhost"):
            msg = f"{scheme}//{location[2:]}: only local paths are supported (no host)"
            raise InvalidStoreUrlError(msg)
        location = "/" + path
    if not location:
        msg = f"{scheme} needs a path, like {scheme}./store"
        raise InvalidStoreUrlError(msg)
    return location


def _no_options(scheme: str, options: dict[str, str], *, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        hint = f"; this scheme takes {', '.join(allowed)}" if allowed else "; this scheme takes none"
        msg = f"{scheme} store URL has unknown option(s) {', '.join(unknown)}{hint}"
        raise InvalidStoreUrlError(msg)


def _durability_option(scheme: str, value: str) -> str:
    from waybook.journal import Durability

    known = [d.value for d in Durability]
    if value not in known:
        msg = f"{scheme} store URL has durability={value[:40]!r}; use one of {', '.join(known)}"
        raise InvalidStoreUrlError(msg)
    return value


def seconds_option(value: str, *, name: str = "busy_timeout") -> float:
    """A URL option in seconds, from 0 to a day (InvalidStoreUrlError naming it otherwise)."""
    from waybook.journal import check_seconds

    try:
        seconds: object = float(value)
    except ValueError:
        seconds = value
    return check_seconds(seconds, what=name, error=InvalidStoreUrlError)
