"""The Claude Agent SDK's `SessionStore` on any waybook store (docs/claude-agent-sdk.md).

One journal per session key (`project_key`, `session_id`, `subpath`): each transcript entry is a custom
record holding the entry verbatim, deduplicated by its `uuid`; each batch ends with the SDK's summary
sidecar in the same atomic append, so a summary never disagrees with the entries it folds. Appends are
compare-and-append on the journal head (a lost race re-reads, drops what is already there, retries).
`delete` purges the journal's bytes (`delete="purge"`, the default) or appends a reset and keeps the
history for audit (`delete="reset"`). The SDK is imported lazily; install `waybook[claude-agent-sdk]`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

from waybook.journal.errors import ConflictError, StaleWriterError
from waybook.journal.head import GENESIS, Head
from waybook.journal.protocol import SessionJournal
from waybook.journal.records import CustomEntry, NewRecord, Record, Reset
from waybook.journal.rules import next_leaf
from waybook.session import new_id, utc_now
from waybook.stores.errors import JournalExistsError, JournalPurgedError, StoreArgumentError
from waybook.stores.protocol import JournalStore

if TYPE_CHECKING:
    from claude_agent_sdk.types import (
        SessionKey,
        SessionListSubkeysKey,
        SessionStoreEntry,
        SessionStoreListEntry,
        SessionSummaryEntry,
    )

ENTRY: Final = "claude_agent_sdk.entry"
SUMMARY: Final = "claude_agent_sdk.summary"
RUNTIME: Final = "claude-agent-sdk"
MAX_RETRIES: Final = 16
T = TypeVar("T")


def _fold_session_summary() -> Callable[..., Any]:
    try:
        from claude_agent_sdk import fold_session_summary
    except ImportError as missing:  # pragma: no cover - depends on the environment
        msg = "WaybookSessionStore needs the Claude Agent SDK: pip install 'waybook[claude-agent-sdk]'"
        raise ImportError(msg) from missing
    return cast("Callable[..., Any]", fold_session_summary)


def _key_digest(project_key: str, session_id: str, subpath: str) -> str:
    return hashlib.sha256(f"{project_key}\0{session_id}\0{subpath}".encode()).hexdigest()[:40]


def _epoch_ms(at: str) -> int:
    """A record's `at` (RFC 3339 UTC, milliseconds) as Unix epoch milliseconds."""
    return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)


class _Transcript:
    """What one journal holds since its last reset, kept current by reading only new records."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal
        self.head: Head = GENESIS
        self.leaf: str | None = None
        self.entries: list[Any] = []
        self.uuids: set[str] = set()
        self.summary: dict[str, Any] | None = None
        self.last: Record | None = None

    def refresh(self) -> None:
        for record in self.journal.read(after=self.head.seq):
            self._see(record)

    def _see(self, record: Record) -> None:
        body = record.body
        if isinstance(body, Reset):
            self.entries, self.uuids, self.summary = [], set(), None
        elif isinstance(body, CustomEntry) and body.type == ENTRY:
            self.entries.append(body.data)
            uuid = body.data.get("uuid") if isinstance(body.data, dict) else None
            if isinstance(uuid, str):
                self.uuids.add(uuid)
        elif isinstance(body, CustomEntry) and body.type == SUMMARY:
            self.summary = body.data
        self.head = Head.of(record)
        self.leaf = next_leaf(self.leaf, record.id, body)
        self.last = record

    @property
    def live(self) -> bool:
        """Whether the key holds entries (a never-written or deleted key does not)."""
        return bool(self.entries)

    @property
    def mtime(self) -> int:
        """Storage write time of the last write, in epoch ms: the `at` of the journal's last record."""
        return _epoch_ms(self.last.at) if self.last is not None else 0

    def append(self, bodies: list[Any]) -> None:
        """Append at the head this transcript last saw (StaleWriterError if another writer moved it)."""
        batch = []
        leaf = self.leaf
        for body in bodies:
            record_id = new_id()
            if isinstance(body, CustomEntry):
                body = CustomEntry(parent=leaf, type=body.type, data=body.data)
            batch.append(NewRecord(id=record_id, at=utc_now(), body=body))
            leaf = next_leaf(leaf, record_id, body)
        result = self.journal.append(batch, expected=self.head)
        for record in result.records:
            self._see(record)


class WaybookSessionStore:
    """A Claude Agent SDK `SessionStore` on a waybook `JournalStore` (duck-typed, as the SDK expects).

    Thread-safe within a process; safe across processes wherever the store is (compare-and-append).
    """

    def __init__(self, store: JournalStore, *, delete: Literal["purge", "reset"] = "purge") -> None:
        if delete not in ("purge", "reset"):
            msg = f"delete={delete!r}: use 'purge' (erase the journal) or 'reset' (keep history)"
            raise StoreArgumentError(msg)
        self._store: JournalStore = getattr(store, "blocking", store)  # a ThreadedStore's blocking store
        self._delete_mode = delete
        self._lock = threading.RLock()
        self._open: dict[str, _Transcript] = {}
        self._ids: dict[tuple[str, str, str], str] = {}

    @property
    def store(self) -> JournalStore:
        return self._store

    # --- the SessionStore protocol ---------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Mirror a batch: entries whose uuid is already stored are dropped; one atomic append."""
        if entries:
            await _in_thread(lambda: self._append(key, list(entries)))

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        def load() -> list[Any] | None:
            transcript = self._transcript(key, create=False)
            return list(transcript.entries) if transcript is not None and transcript.live else None

        return await _in_thread(load)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        def listing() -> list[Any]:
            found = self._live(project_key=project_key, subpath="")
            return [{"session_id": t_key[1], "mtime": t.mtime} for t_key, t in found]

        return await _in_thread(listing)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        def summaries() -> list[Any]:
            found = self._live(project_key=project_key, subpath="")
            return [{**t.summary, "mtime": t.mtime} for _, t in found if t.summary is not None]

        return await _in_thread(summaries)

    async def delete(self, key: SessionKey) -> None:
        """Delete a key; a main key takes its subagent keys with it. Purge or reset, as configured."""
        await _in_thread(lambda: self._delete(key))

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        def subkeys() -> list[str]:
            found = self._live(project_key=key["project_key"], session_id=key["session_id"])
            return sorted(t_key[2] for t_key, _ in found if t_key[2])

        return await _in_thread(subkeys)

    # --- internals --------------------------------------------------------------------------------

    def _append(self, key: SessionKey, entries: list[Any]) -> None:
        with self._lock:
            transcript = self._transcript(key, create=True)
            assert transcript is not None
            for _ in range(MAX_RETRIES):
                transcript.refresh()
                fresh, seen = [], set(transcript.uuids)
                for entry in entries:
                    uuid = entry.get("uuid") if isinstance(entry, dict) else None
                    if isinstance(uuid, str):
                        if uuid in seen:
                            continue
                        seen.add(uuid)
                    fresh.append(entry)
                if not fresh:
                    return
                bodies: list[Any] = [CustomEntry(parent=None, type=ENTRY, data=entry) for entry in fresh]
                if not key.get("subpath"):
                    prev = (
                        None
                        if transcript.summary is None
                        else {**transcript.summary, "mtime": transcript.mtime}
                    )
                    folded = dict(_fold_session_summary()(prev, key, fresh))
                    folded.pop("mtime", None)  # stamped on read from the record's storage time
                    bodies.append(CustomEntry(parent=None, type=SUMMARY, data=folded))
                try:
                    transcript.append(bodies)
                except StaleWriterError:
                    continue  # another process appended: read its records, dedupe again, retry
                return
            msg = f"{transcript.journal.name}: lost {MAX_RETRIES} append races in a row; retry later"
            raise ConflictError(msg)

    def _delete(self, key: SessionKey) -> None:
        with self._lock:
            subpath = key.get("subpath") or ""
            if subpath:
                targets = [(key["project_key"], key["session_id"], subpath)]
            else:
                targets = [
                    k for k, _ in self._journals(project_key=key["project_key"], session_id=key["session_id"])
                ]
            for project_key, session_id, sub in targets:
                journal_id = self._current_id(project_key, session_id, sub)
                if journal_id is None:
                    continue
                if self._delete_mode == "purge":
                    self._store.purge(journal_id, reason="claude_agent_sdk SessionStore.delete")
                    self._open.pop(journal_id, None)
                    self._ids.pop((project_key, session_id, sub), None)
                    continue
                transcript = self._transcript(
                    {"project_key": project_key, "session_id": session_id, "subpath": sub}, create=False
                )
                if transcript is None or not transcript.live:
                    continue
                for _ in range(MAX_RETRIES):
                    transcript.refresh()
                    try:
                        transcript.append([Reset(reason="claude_agent_sdk SessionStore.delete")])
                        break
                    except StaleWriterError:
                        continue

    def _metadata(self, project_key: str, session_id: str, subpath: str) -> dict[str, str]:
        return {
            "runtime": RUNTIME,
            "project_key": project_key,
            "session_id": session_id,
            "subpath": subpath,
            "key": _key_digest(project_key, session_id, subpath),
        }

    def _current_id(self, project_key: str, session_id: str, subpath: str) -> str | None:
        """The key's journal: the latest one created for it (an earlier one may have been purged)."""
        known = self._ids.get((project_key, session_id, subpath))
        if known is not None:
            return known
        digest = _key_digest(project_key, session_id, subpath)
        found = [info.journal_id for info in self._pages(metadata={"runtime": RUNTIME, "key": digest})]
        if found:
            self._ids[(project_key, session_id, subpath)] = found[-1]
        return found[-1] if found else None

    def _transcript(self, key: Any, *, create: bool) -> _Transcript | None:
        project_key, session_id, subpath = key["project_key"], key["session_id"], key.get("subpath") or ""
        with self._lock:
            journal_id = self._current_id(project_key, session_id, subpath)
            if journal_id is None:
                if not create:
                    return None
                journal_id = self._create(project_key, session_id, subpath)
            transcript = self._open.get(journal_id)
            if transcript is None:
                transcript = self._open[journal_id] = _Transcript(self._store.open(journal_id))
            transcript.refresh()
            return transcript

    def _create(self, project_key: str, session_id: str, subpath: str) -> str:
        base = "cas-" + _key_digest(project_key, session_id, subpath)
        generation = 0
        while True:
            journal_id = base if generation == 0 else f"{base}-{generation}"
            try:
                self._store.create(journal_id, metadata=self._metadata(project_key, session_id, subpath))
            except JournalPurgedError:
                generation += 1  # a purged id is retired; the key's next life gets the next id
                continue
            except JournalExistsError:
                pass  # another process created it first
            self._ids[(project_key, session_id, subpath)] = journal_id
            return journal_id

    def _pages(self, **filters: Any) -> Iterator[Any]:
        after = None
        while True:
            page = self._store.list(after=after, limit=500, **filters)
            yield from page
            if page.cursor is None:
                return
            after = page.cursor

    def _journals(self, **metadata: str) -> list[tuple[tuple[str, str, str], str]]:
        latest: dict[tuple[str, str, str], str] = {}
        for info in self._pages(metadata={"runtime": RUNTIME, **metadata}):
            meta = info.metadata
            latest[(meta["project_key"], meta["session_id"], meta["subpath"])] = info.journal_id
        return list(latest.items())

    def _live(self, **metadata: str) -> list[tuple[tuple[str, str, str], _Transcript]]:
        found = []
        for (project_key, session_id, subpath), journal_id in self._journals(**metadata):
            transcript = self._open.get(journal_id)
            if transcript is None:
                transcript = self._open[journal_id] = _Transcript(self._store.open(journal_id))
            transcript.refresh()
            if transcript.live:
                found.append(((project_key, session_id, subpath), transcript))
        return found


async def _in_thread(action: Callable[[], T]) -> T:
    import anyio.to_thread

    return await anyio.to_thread.run_sync(action)


__all__ = ["WaybookSessionStore"]
