"""The Claude Agent SDK's `SessionStore` on any waybook store (docs/claude-agent-sdk.md).

One journal per session key (`project_key`, `session_id`, `subpath`): each transcript entry is a custom
record holding the entry verbatim, deduplicated by its `uuid`; a batch of a main transcript ends with the
SDK's summary sidecar in the same atomic append, so a summary never disagrees with the entries it folds.
Appends are compare-and-append on the journal head (a lost race re-reads, drops what is already there,
retries). `delete` purges the journal's bytes (`delete="purge"`, the default) or appends a reset and keeps
the history for audit (`delete="reset"`). The SDK is imported lazily: install `waybook[claude-agent-sdk]`.

An entry whose content was erased (docs/erasure.md) loads as an entry holding the placeholder naming the
erasure, in the transcript's uuid chain (`shown_entries`).
"""

from __future__ import annotations

import uuid as uuids
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs

from waybook.integrations._extras import needs_extra
from waybook.integrations._keyed import KeyedRuntime, Tail, epoch_ms, retrying, run_inline
from waybook.model import AnyBody, CustomEntry, Erasure, Record, Reset, erased_placeholder
from waybook.stores import JournalStore

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
DELETED: Final = "claude_agent_sdk SessionStore.delete"
T = TypeVar("T")


def _fold_session_summary() -> Callable[..., Any]:
    with needs_extra(
        "waybook.integrations.claude_agent_sdk",
        runtime="the Claude Agent SDK",
        extra="claude-agent-sdk",
        modules=("claude_agent_sdk",),
    ):
        from claude_agent_sdk import fold_session_summary
    return cast("Callable[..., Any]", fold_session_summary)


@attrs.frozen
class ErasedEntry:
    """An entry whose content erasure `by` took (its `reason` once the erasure record is read): shown by
    `shown_entries` as the placeholder."""

    record_id: str
    at: str
    by: int
    reason: str | None = None


@attrs.define
class Transcript:
    """A key's transcript since its last reset: the entries, their uuids, the summary sidecar.

    Folded in place, each record in constant time: a fold that copied the entries and uuids on every
    record made loading a transcript quadratic (32,000 entries: 16 s). Readers copy what they keep under
    the journals' lock."""

    entries: list[Any] = attrs.Factory(list)
    uuids: set[str] = attrs.Factory(set)
    summary: dict[str, Any] | None = None
    places: dict[int, tuple[int, str, str]] = attrs.Factory(dict)
    """Each entry's index in `entries`, its record's id and time, by the record's seq, and the summary's
    (index -1): an erasure names seqs."""


def _apply(transcript: Transcript, record: Record) -> Transcript:
    body = record.body
    if isinstance(body, Reset):
        return Transcript()
    if isinstance(body, Erasure):
        _apply_erasure(transcript, record.seq, body)
    elif isinstance(body, CustomEntry) and body.type == ENTRY:
        transcript.places[record.seq] = (len(transcript.entries), record.id, record.at)
        if record.erased is not None:
            transcript.entries.append(ErasedEntry(record.id, record.at, record.erased.by))
            return transcript
        uuid = body.data.get("uuid") if isinstance(body.data, dict) else None
        if isinstance(uuid, str):
            transcript.uuids.add(uuid)
        transcript.entries.append(body.data)
    elif isinstance(body, CustomEntry) and body.type == SUMMARY:
        transcript.places[record.seq] = (-1, record.id, record.at)
        transcript.summary = body.data if record.erased is None else None  # an erased sidecar: folded anew
    return transcript


def _apply_erasure(transcript: Transcript, by: int, body: Erasure) -> None:
    """Each entry `body` took shown as its placeholder with the reason, whether it was read before the
    erasure (its content, held in memory, dropped) or after; an erased summary sidecar dropped."""
    for taken in body.records:
        place = transcript.places.get(taken.seq)
        if place is None:
            continue
        index, record_id, at = place
        if index < 0:
            transcript.summary = None
        else:
            transcript.entries[index] = ErasedEntry(record_id, at, by, body.reason)


_ERASED_IDS: Final = uuids.UUID("0d1b6c1e-6a4f-4c3e-9d0e-46b1e2a7c5f9")
"""The namespace of the uuid a placeholder takes when its neighbours do not name the erased one's."""


def shown_entries(entries: Sequence[Any]) -> list[Any]:
    """`entries` with each erased one as an entry holding the placeholder naming its erasure, linked into
    the uuid chain (its uuid the one the next entry names as its parent, its parent the entry before),
    so the SDK's chain builder keeps every neighbour. When tool results after it (past the assistant
    entries of its turn) answer calls no entry holds, it is an assistant entry giving back those calls
    (name `erased`, no input), so no result is orphaned; else a user entry."""
    if not any(isinstance(item, ErasedEntry) for item in entries):
        return list(entries)
    present = {
        item["uuid"] for item in entries if isinstance(item, dict) and isinstance(item.get("uuid"), str)
    }
    made = {
        block["id"]
        for item in entries
        for block in _blocks(item, "tool_use")
        if isinstance(block.get("id"), str)
    }
    shown: list[Any] = []
    for i, item in enumerate(entries):
        if not isinstance(item, ErasedEntry):
            shown.append(item)
            continue
        calls = _unanswered(entries[i + 1 :], made)
        made.update(calls)
        before = shown[-1] if shown else None
        after = entries[i + 1] if i + 1 < len(entries) else None
        shown.append(_placeholder(item, calls, before, after, present))
    return shown


def _blocks(item: Any, kind: str) -> list[dict[str, Any]]:
    message = item.get("message") if isinstance(item, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict) and block.get("type") == kind]


def _unanswered(after: Sequence[Any], made: set[str]) -> list[str]:
    """The call ids the tool results right after the assistant entries (and holes) at the start of
    `after` answer, that no entry's tool use holds."""
    start = 0
    while start < len(after) and (
        isinstance(after[start], ErasedEntry)
        or (isinstance(after[start], dict) and after[start].get("type") == "assistant")
    ):
        start += 1
    found: list[str] = []
    for item in after[start:]:
        results = _blocks(item, "tool_result")
        if not results:
            break
        found += [
            block["tool_use_id"]
            for block in results
            if isinstance(block.get("tool_use_id"), str)
            and block["tool_use_id"] not in made
            and block["tool_use_id"] not in found
        ]
    return found


def _placeholder(
    item: ErasedEntry, calls: list[str], before: Any, after: Any, present: set[str]
) -> dict[str, Any]:
    shown = erased_placeholder(item.by, item.reason)
    parent = before.get("uuid") if isinstance(before, dict) else None
    named = after.get("parentUuid") if isinstance(after, dict) else None
    own = (
        named
        if isinstance(named, str) and named not in present
        else str(uuids.uuid5(_ERASED_IDS, item.record_id))
    )
    message: dict[str, Any]
    if calls:
        uses = [{"type": "tool_use", "id": call, "name": "erased", "input": {}} for call in calls]
        message = {
            "role": "assistant",
            "id": f"erased_{item.record_id}",
            "content": [{"type": "text", "text": shown}, *uses],
        }
    else:
        message = {"role": "user", "content": shown}
    entry: dict[str, Any] = {
        "type": message["role"],
        "uuid": own,
        "parentUuid": parent,
        "timestamp": item.at,
        "message": message,
    }
    session = next(
        (n.get("sessionId") for n in (before, after) if isinstance(n, dict) and n.get("sessionId")), None
    )
    if session is not None:
        entry["sessionId"] = session
    return entry


def _mtime(tail: Tail[Transcript]) -> int:
    """Storage write time of the key's last write, in epoch ms: the `at` of its journal's last record."""
    return epoch_ms(tail.last.at) if tail.last is not None else 0


class WaybookSessionStore(KeyedRuntime):
    """A Claude Agent SDK `SessionStore` on a waybook `JournalStore` (duck-typed, as the SDK expects).

    Thread-safe within a process; safe across processes wherever the store is (compare-and-append).
    """

    def _open_journals(self) -> None:
        key = ("project_key", "session_id", "subpath")
        self._transcripts = self._journals(
            runtime=RUNTIME, prefix="cas", fields=key, initial=Transcript, apply=_apply
        )

    # --- the SessionStore protocol ---------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Mirror a batch: entries whose uuid is already stored are dropped; one atomic append."""
        if entries:
            batch = list(entries)
            await _run(self.store, lambda: self._append(key, batch))

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        def load() -> list[Any] | None:
            with self._transcripts.lock:  # the fold is in place: a copy, taken between folds
                tail = self._transcripts.tail(_key(key), create=False)
                entries = list(tail.state.entries) if tail is not None else []
            return shown_entries(entries) if entries else None

        return await _run(self.store, load)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        def listing() -> list[Any]:
            live = self._live(project_key=project_key, subpath="")
            return [{"session_id": key[1], "mtime": _mtime(tail)} for key, tail in live]

        return await _run(self.store, listing)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        def summaries() -> list[Any]:
            with self._transcripts.lock:
                live = self._live(project_key=project_key, subpath="")
                return [
                    {**tail.state.summary, "mtime": _mtime(tail)}
                    for _, tail in live
                    if tail.state.summary is not None
                ]

        return await _run(self.store, summaries)

    async def delete(self, key: SessionKey) -> None:
        """Delete a key; a main key takes its subagent keys with it. Purge or reset, as configured."""
        await _run(self.store, lambda: self._delete(key))

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        def subkeys() -> list[str]:
            live = self._live(project_key=key["project_key"], session_id=key["session_id"])
            return sorted(found[2] for found, _ in live if found[2])

        return await _run(self.store, subkeys)

    # --- internals --------------------------------------------------------------------------------

    def _append(self, key: SessionKey, entries: list[Any]) -> None:
        with self._transcripts.lock:
            tail = self._transcripts.tail(_key(key), create=True)
            assert tail is not None

            def plan() -> list[AnyBody] | None:
                fresh, seen = [], set(tail.state.uuids)
                for entry in entries:
                    uuid = entry.get("uuid") if isinstance(entry, dict) else None
                    if isinstance(uuid, str):
                        if uuid in seen:
                            continue
                        seen.add(uuid)
                    fresh.append(entry)
                if not fresh:
                    return None
                bodies: list[AnyBody] = [CustomEntry(parent=None, type=ENTRY, data=entry) for entry in fresh]
                if not key.get("subpath"):
                    summary = tail.state.summary
                    prev = None if summary is None else {**summary, "mtime": _mtime(tail)}
                    folded = dict(_fold_session_summary()(prev, key, fresh))
                    folded.pop("mtime", None)  # the record's own `at` is the sidecar's storage time
                    bodies.append(CustomEntry(parent=None, type=SUMMARY, data=folded))
                return bodies

            retrying(tail, plan)

    def _delete(self, key: SessionKey) -> None:
        with self._transcripts.lock:
            targets: list[tuple[str, ...]]
            if key.get("subpath"):
                targets = [_key(key)]
            else:
                listed = self._transcripts.listed(
                    project_key=key["project_key"], session_id=key["session_id"]
                )
                targets = [found for found, _ in listed]
            for target in targets:
                self._delete_key(self._transcripts, target, reason=DELETED, live=_live)

    def _live(self, **metadata: str) -> list[tuple[tuple[str, ...], Tail[Transcript]]]:
        with self._transcripts.lock:
            found = []
            for key, journal_id in self._transcripts.listed(**metadata):
                tail = self._transcripts.tail_of(journal_id)
                if tail.state.entries:
                    found.append((key, tail))
            return found


def _live(transcript: Transcript) -> bool:
    """Whether the key's session exists (since its last reset, it has entries)."""
    return bool(transcript.entries)


def _key(key: Any) -> tuple[str, str, str]:
    return (key["project_key"], key["session_id"], key.get("subpath") or "")


async def _run(store: JournalStore, action: Callable[[], T]) -> T:
    """Run blocking store work in a worker thread (inline for the memory store, which never blocks)."""
    if run_inline(store):
        return action()
    import anyio.to_thread

    return await anyio.to_thread.run_sync(action)


__all__ = ["WaybookSessionStore"]
