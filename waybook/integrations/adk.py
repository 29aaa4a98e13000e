"""Google ADK's `BaseSessionService` on any waybook store (docs/adk.md).

Each session is a journal: a creation record with its session-scoped state, then every event verbatim
(ADK's own JSON, `temp:` keys dropped). App and user state live in journals of their own, one per app and
one per (app, user). The session journal is the outbox: an event commits there first, with the journal
head its `Session` was read at as the stale-writer check (`StaleSessionError` exactly when another writer
appended since), and its `app:` and `user:` deltas are then applied to the scope journals, each marked
with the session record it came from, so applying twice changes nothing and an interrupted write is
completed by the next call that reads the session. ADK is imported lazily: install `waybook[adk]`.

An event whose content was erased (docs/erasure.md) is shown in its place as a user event holding the
placeholder naming the erasure (its id the record's, its time the record's); an erased creation or state
record costs the state it held, never the session.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, Final, TypeVar

import attrs

from waybook.integrations._extras import needs_extra
from waybook.integrations._keyed import KeyedRuntime, Tail, retrying, run_inline
from waybook.model import (
    AnyBody,
    CustomEntry,
    Erasure,
    Head,
    Record,
    Reset,
    StaleWriterError,
    erased_placeholder,
)
from waybook.stores import JournalStore

with needs_extra("waybook.integrations.adk", runtime="Google ADK", extra="adk", modules=("google",)):
    from google.adk.errors.already_exists_error import AlreadyExistsError
    from google.adk.errors.session_not_found_error import SessionNotFoundError
    from google.adk.events.event import Event
    from google.adk.sessions import _session_util
    from google.adk.sessions.base_session_service import (
        BaseSessionService,
        GetSessionConfig,
        ListSessionsResponse,
    )
    from google.adk.sessions.session import Session
    from google.adk.sessions.state import State

try:
    from google.adk.errors._stale_session_error import StaleSessionError
except ImportError:  # pragma: no cover - older ADK releases raise a plain ValueError
    StaleSessionError = ValueError  # type: ignore[misc, assignment]

RUNTIME: Final = "google-adk"
SCOPES: Final = "google-adk-state"
CREATED: Final = "google_adk.session"
EVENT: Final = "google_adk.event"
DELTA: Final = "google_adk.state"
DELETED: Final = "google_adk delete_session"
T = TypeVar("T")


class SessionFold:
    """One session journal since its last reset (mutated in place as records are read)."""

    def __init__(self) -> None:
        self.live = False
        self.state: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.ids: dict[str, int] = {}
        self.last_update_time = 0.0
        self.outbox: list[tuple[int, dict[str, Any], dict[str, Any]]] = []  # (seq, app delta, user delta)
        self.records: dict[int, tuple[int, str, str]] = {}
        """Each event's place in `events`, its record's id and time, by the record's seq (an erasure
        names seqs)."""


def _epoch(at: str) -> float:
    return datetime.fromisoformat(at).timestamp()


def _erased_event(record_id: str, at: str, by: int, reason: str | None) -> dict[str, Any]:
    """The event shown in place of record `record_id`'s, whose content erasure `by` took: the placeholder
    naming it (its reason None until the erasure record is read), as the user, at the record's time."""
    return {
        "id": record_id,
        "invocation_id": "",
        "author": "user",
        "timestamp": _epoch(at),
        "content": {"role": "user", "parts": [{"text": erased_placeholder(by, reason)}]},
    }


def _apply_erased(fold: SessionFold, record: Record) -> SessionFold:
    """A record whose content was erased before it was read: an event's placeholder, or a creation
    record's session with no state."""
    assert isinstance(record.body, CustomEntry)
    assert record.erased is not None
    if record.body.type == CREATED:
        fold.live, fold.state, fold.events, fold.ids = True, {}, [], {}
        fold.last_update_time = _epoch(record.at)
        return fold
    event = _erased_event(record.id, record.at, record.erased.by, None)
    fold.records[record.seq] = (len(fold.events), record.id, record.at)
    fold.ids[event["id"]] = len(fold.events)
    fold.events.append(event)
    fold.last_update_time = event["timestamp"]
    return fold


def _apply_erasure(fold: SessionFold, record: Record, body: Erasure) -> SessionFold:
    """Each event `body` took shown as its placeholder, with the reason, whether it was read before the
    erasure (its content, held in memory, dropped) or after."""
    for taken in body.records:
        if taken.seq in fold.records:
            index, record_id, at = fold.records[taken.seq]
            fold.events[index] = _erased_event(record_id, at, record.seq, body.reason)
    return fold


def _apply_session(fold: SessionFold, record: Record) -> SessionFold:
    body = record.body
    if isinstance(body, Reset):
        return SessionFold()
    if isinstance(body, Erasure):
        return _apply_erasure(fold, record, body)
    if not isinstance(body, CustomEntry) or body.type not in (CREATED, EVENT):
        return fold
    if record.erased is not None:
        return _apply_erased(fold, record)
    if body.type == CREATED:
        fold.live, fold.state, fold.events, fold.ids = True, dict(body.data["state"]), [], {}
        fold.last_update_time = body.data["created"]
        deltas = {"app": body.data["app"], "user": body.data["user"]}
    else:
        event = body.data
        fold.records[record.seq] = (len(fold.events), record.id, record.at)
        fold.ids[event["id"]] = len(fold.events)
        fold.events.append(event)
        fold.last_update_time = event["timestamp"]
        deltas = _session_util.extract_state_delta((event.get("actions") or {}).get("state_delta") or {})
        fold.state.update(deltas["session"])
    if deltas["app"] or deltas["user"]:
        fold.outbox.append((record.seq, deltas["app"], deltas["user"]))
    return fold


@attrs.define
class ScopeFold:
    """App or user state, and which session records' deltas it holds (`journal@seq`)."""

    state: dict[str, Any] = attrs.Factory(dict)
    applied: set[str] = attrs.Factory(set)


def _apply_scope(fold: ScopeFold, record: Record) -> ScopeFold:
    body = record.body
    if isinstance(body, CustomEntry) and body.type == DELTA and record.erased is None:
        fold.state.update(body.data["delta"])
        fold.applied.add(body.data["source"])
    return fold


def _marker(journal_id: str, head: Head) -> str:
    return f"{journal_id}@{head.seq}:{head.digest}"


def _parse_marker(marker: object) -> tuple[str, Head] | None:
    """The (journal id, head) a session was read at, or None for a marker this service did not set."""
    if not isinstance(marker, str) or "@" not in marker:
        return None
    journal_id, _, rest = marker.rpartition("@")
    seq, _, digest = rest.partition(":")
    if not seq.isdigit() or len(digest) != 64:
        return None
    return journal_id, Head(int(seq), digest)


def _as_stored(tail: Tail[Any], stored: dict[str, Any]) -> Any:
    """An event's JSON as the journal holds it (its secrets masked, if the service masks them)."""
    return stored if tail.mask is None else tail.mask.value(stored)


class WaybookSessionService(KeyedRuntime, BaseSessionService):
    """An ADK session service on a waybook `JournalStore`. Thread-safe; safe across processes wherever
    the store is (every write is a compare-and-append)."""

    def _open_journals(self) -> None:
        session_key = ("app_name", "user_id", "session_id")
        self._sessions = self._journals(
            runtime=RUNTIME, prefix="adk", fields=session_key, initial=SessionFold, apply=_apply_session
        )
        scope_key = ("scope", "app_name", "user_id")
        self._scopes = self._journals(
            runtime=SCOPES, prefix="adks", fields=scope_key, initial=ScopeFold, apply=_apply_scope
        )

    # --- BaseSessionService ----------------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = session_id.strip() if session_id else None
        session_id = session_id or str(uuid.uuid4())
        deltas = _session_util.extract_state_delta(_json_safe(state or {}))
        key = (app_name, user_id, session_id)

        def create() -> Session:
            with self._sessions.lock:
                tail = self._sessions.tail(key, create=True)
                assert tail is not None

                def plan() -> list[AnyBody]:
                    if tail.state.live:
                        msg = f"Session with id {session_id} already exists."
                        raise AlreadyExistsError(msg)
                    data = {"state": deltas["session"], "app": deltas["app"], "user": deltas["user"]}
                    return [CustomEntry(parent=None, type=CREATED, data={**data, "created": time.time()})]

                retrying(tail, plan)
                return self._session(key, tail, None)

        return await _run(self.store, create)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        session_id = session_id.strip() if session_id else session_id
        key = (app_name, user_id, session_id)

        def get() -> Session | None:
            with self._sessions.lock:
                tail = self._sessions.tail(key, create=False)
                if tail is None or not tail.state.live:
                    return None
                return self._session(key, tail, config)

        return await _run(self.store, get)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        def listing() -> ListSessionsResponse:
            with self._sessions.lock:
                filters = {"app_name": app_name, **({"user_id": user_id} if user_id is not None else {})}
                sessions = []
                for key, journal_id in self._sessions.listed(**filters):
                    tail = self._sessions.tail_of(journal_id)
                    if tail.state.live:
                        sessions.append(self._session(key, tail, GetSessionConfig(num_recent_events=0)))
                sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
                return ListSessionsResponse(sessions=sessions)

        return await _run(self.store, listing)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        session_id = session_id.strip() if session_id else session_id
        key = (app_name, user_id, session_id)

        def delete() -> None:
            self._delete_key(self._sessions, key, reason=DELETED, live=lambda fold: fold.live)

        await _run(self.store, delete)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        def user_state() -> dict[str, Any]:
            tail = self._scopes.tail(("user", app_name, user_id), create=False)
            return json.loads(json.dumps(tail.state.state)) if tail is not None else {}

        return await _run(self.store, user_state)

    async def append_event(self, session: Session, event: Event) -> Event:
        """Commit the event at the head `session` was read at (StaleSessionError if another writer
        appended since), then update `session` as ADK's base service does."""
        if event.partial:
            return event
        key = (session.app_name, session.user_id, session.id)
        stored = _stored(event)
        marker = _parse_marker(session._storage_update_marker)

        def commit() -> tuple[bool, Head | None, str]:
            with self._sessions.lock:
                tail = self._sessions.tail(key, create=False)
                if tail is None or not tail.state.live:
                    msg = f"Session {session.id} not found."
                    raise SessionNotFoundError(msg)
                journal_id = tail.journal.name
                known = tail.state.ids.get(stored["id"])
                if known is not None and tail.state.events[known] == _as_stored(tail, stored):
                    return False, None, journal_id  # an equal re-delivery: already stored
                expected = self._expected(session, tail, journal_id, marker)
                try:
                    tail.append([CustomEntry(parent=None, type=EVENT, data=stored)], expected=expected)
                except StaleWriterError as stale:
                    msg = (
                        f"session {session.id} changed since it was read (journal {journal_id} is at seq "
                        f"{stale.actual.seq}, the session was read at seq {expected.seq}); get_session "
                        "again and retry"
                    )
                    raise StaleSessionError(msg) from None
                self._deliver(key, tail)
                return True, tail.head, journal_id

        written, head, journal_id = await _run(self.store, commit)
        if not written:
            return event
        await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        assert head is not None
        session._storage_update_marker = _marker(journal_id, head)
        return event

    # --- internals --------------------------------------------------------------------------------

    def _expected(
        self, session: Session, tail: Tail[SessionFold], journal_id: str, marker: tuple[str, Head] | None
    ) -> Head:
        """The head `session` was read at. A session built elsewhere (no marker) is current only if it
        holds the journal's last event."""
        if marker is not None:
            read_from, head = marker
            if read_from == journal_id:
                return head
            reason = "was deleted and created again since it was read"
        else:
            last = tail.state.events[-1]["id"] if tail.state.events else None
            mine = session.events[-1].id if session.events else None
            if last == mine:
                return tail.head
            reason = "was not read from this service and does not hold the stored last event"
        msg = f"session {session.id} {reason}; get_session again and retry"
        raise StaleSessionError(msg)

    def _deliver(self, key: tuple[str, ...], tail: Tail[SessionFold]) -> None:
        """Apply the session's app: and user: deltas that a scope journal does not hold yet."""
        app_name, user_id, _ = key
        for seq, app, user in tail.state.outbox:
            source = f"{tail.journal.name}@{seq}"
            for scope_key, delta in ((("app", app_name, ""), app), (("user", app_name, user_id), user)):
                if not delta:
                    continue
                scope = self._scopes.tail(scope_key, create=True)
                assert scope is not None
                retrying(scope, partial(_delta_plan, scope, delta, source))

    def _session(
        self, key: tuple[str, ...], tail: Tail[SessionFold], config: GetSessionConfig | None
    ) -> Session:
        self._deliver(key, tail)
        app_name, user_id, session_id = key
        events: list[dict[str, Any]] = tail.state.events
        if config is not None:
            if config.num_recent_events is not None:
                events = events[-config.num_recent_events :] if config.num_recent_events else []
            if config.after_timestamp is not None:
                i = len(events) - 1
                while i >= 0 and events[i]["timestamp"] >= config.after_timestamp:
                    i -= 1
                events = events[i + 1 :]
        state = json.loads(json.dumps(tail.state.state))
        for prefix, scope_key in (
            (State.APP_PREFIX, ("app", app_name, "")),
            (State.USER_PREFIX, ("user", app_name, user_id)),
        ):
            scope = self._scopes.tail(scope_key, create=False)
            if scope is not None:
                state.update({prefix + k: v for k, v in json.loads(json.dumps(scope.state.state)).items()})
        session = Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=state,
            events=[Event.model_validate(event) for event in events],
            last_update_time=tail.state.last_update_time,
        )
        session._storage_update_marker = _marker(tail.journal.name, tail.head)
        return session


def _delta_plan(scope: Tail[ScopeFold], delta: dict[str, Any], source: str) -> list[AnyBody] | None:
    if source in scope.state.applied:
        return None
    return [CustomEntry(parent=None, type=DELTA, data={"delta": delta, "source": source})]


def _stored(event: Event) -> dict[str, Any]:
    """The event as ADK serializes it for storage, without its `temp:` state keys."""
    data: dict[str, Any] = json.loads(event.model_dump_json(exclude_none=True))
    delta = (data.get("actions") or {}).get("state_delta")
    if delta:
        data["actions"]["state_delta"] = {
            k: v for k, v in delta.items() if not k.startswith(State.TEMP_PREFIX)
        }
    return data


def _json_safe(state: dict[str, Any]) -> dict[str, Any]:
    return dict(_session_util.make_json_safe_state(state))


async def _run(store: JournalStore, action: Callable[[], T]) -> T:
    """Run blocking store work in a worker thread (inline for the memory store, which never blocks)."""
    if run_inline(store):
        return action()
    import asyncio

    return await asyncio.to_thread(action)


__all__ = ["WaybookSessionService"]
