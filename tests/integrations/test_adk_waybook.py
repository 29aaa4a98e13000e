"""What WaybookSessionService adds to ADK's contract: exact staleness, verbatim events, the outbox."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from tests.helpers.adk import APP, USER, event, texts
from waybook._session import new_id, utc_now
from waybook.integrations.adk import CREATED, EVENT, StaleSessionError, WaybookSessionService
from waybook.model._records import CustomEntry, NewRecord
from waybook.stores import open_store


def test_only_an_append_to_the_same_session_makes_a_session_object_stale(tmp_path: Path) -> None:
    url = f"file:{tmp_path}"
    one, two = WaybookSessionService(open_store(url)), WaybookSessionService(open_store(url))  # two processes

    async def go() -> None:
        mine = await one.create_session(app_name=APP, user_id=USER, session_id="s1")
        other = await two.create_session(app_name=APP, user_id=USER, session_id="s2")
        await two.append_event(
            other, event("elsewhere", delta={"user:seen": True})
        )  # same user, other session
        await one.append_event(mine, event("still current"))
        theirs = await two.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert theirs is not None
        await two.append_event(theirs, event("from two"))
        with pytest.raises(StaleSessionError, match="get_session again"):
            await one.append_event(mine, event("from one"))

    asyncio.run(go())


def test_an_equal_redelivery_is_stored_once() -> None:
    service = WaybookSessionService(open_store("memory:"))

    async def go() -> list[str]:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        sent = event("once", delta={"user:n": 1})
        await service.append_event(session, sent)
        await service.append_event(session, sent)
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        return texts(got)

    assert asyncio.run(go()) == ["once"]


def test_events_are_stored_verbatim_as_adk_serializes_them(tmp_path: Path) -> None:
    store = open_store(f"file:{tmp_path}")
    service = WaybookSessionService(store)
    sent = event("hello", delta={"k": "v", "temp:x": 1})

    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        await service.append_event(session, sent)

    asyncio.run(go())
    (info,) = store.list(metadata={"runtime": "google-adk"})
    stored = [r.body.data for r in store.open(info.journal_id).read() if getattr(r.body, "type", "") == EVENT]
    expected = json.loads(sent.model_dump_json(exclude_none=True))
    assert stored == [expected]
    assert "temp:x" not in json.dumps(stored)


def test_a_write_interrupted_before_its_user_delta_landed_is_completed_by_the_next_read(
    tmp_path: Path,
) -> None:
    """The process died after the session journal committed the event: the scope journal lacks it."""
    store = open_store(f"file:{tmp_path}")

    async def create() -> None:
        await WaybookSessionService(store).create_session(app_name=APP, user_id=USER, session_id="s1")

    asyncio.run(create())
    (info,) = store.list(metadata={"runtime": "google-adk"})
    journal = store.open(info.journal_id)
    head = journal.head()
    last = list(journal.read())[-1]
    data: dict[str, Any] = json.loads(
        event("crash", delta={"user:pref": "tea"}).model_dump_json(exclude_none=True)
    )
    body = CustomEntry(parent=last.id, type=EVENT, data=data)
    journal.append([NewRecord(id=new_id(), at=utc_now(), body=body)], expected=head)

    restarted = WaybookSessionService(open_store(f"file:{tmp_path}"))

    async def read() -> tuple[dict[str, Any], dict[str, Any]]:
        session = await restarted.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert session is not None
        await restarted.get_session(
            app_name=APP, user_id=USER, session_id="s1"
        )  # delivering twice is a no-op
        return session.state, await restarted.get_user_state(app_name=APP, user_id=USER)

    state, user_state = asyncio.run(read())
    assert state == {"user:pref": "tea"}
    assert user_state == {"pref": "tea"}
    user_journals = store.list(metadata={"runtime": "google-adk-state", "scope": "user"})
    (user_info,) = user_journals
    deltas = [
        r
        for r in store.open(user_info.journal_id).read()
        if getattr(r.body, "type", "") == "google_adk.state"
    ]
    assert len(deltas) == 1


def test_reset_delete_keeps_the_history_for_audit() -> None:
    store = open_store("memory:")
    service = WaybookSessionService(store, delete="reset")

    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        await service.append_event(session, event("kept"))
        await service.delete_session(app_name=APP, user_id=USER, session_id="s1")
        assert await service.get_session(app_name=APP, user_id=USER, session_id="s1") is None

    asyncio.run(go())
    (info,) = store.list(metadata={"runtime": "google-adk"})
    kinds = [(r.kind, getattr(r.body, "type", None)) for r in store.open(info.journal_id).read()]
    assert ("waybook.custom/1", CREATED) in kinds
    assert ("waybook.custom/1", EVENT) in kinds
    assert kinds[-1][0] == "waybook.reset/1"


def test_a_restarted_service_sees_every_session(tmp_path: Path) -> None:
    async def write() -> None:
        service = WaybookSessionService(open_store(f"file:{tmp_path}"))
        session = await service.create_session(
            app_name=APP, user_id=USER, session_id="s1", state={"app:v": 2}
        )
        await service.append_event(session, event("persisted"))

    async def read() -> Any:
        return await WaybookSessionService(open_store(f"file:{tmp_path}")).get_session(
            app_name=APP, user_id=USER, session_id="s1"
        )

    asyncio.run(write())
    again = asyncio.run(read())
    assert texts(again) == ["persisted"]
    assert again.state == {"app:v": 2}
