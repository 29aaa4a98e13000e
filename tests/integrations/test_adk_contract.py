"""A contract for Google ADK session services, from ADK's documented behaviour and its own services.

ADK publishes no reusable suite, so this is ours. It runs against ADK's InMemorySessionService and
SqliteSessionService (which proves the test: each contract holds for ADK's own services) and against
WaybookSessionService on the memory, directory and SQLite stores. Stale-writer detection is a contract of
persistent services only: ADK's in-memory service accepts a stale session object by design.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from tests.helpers.adk import APP, USER, event, texts
from waybook.integrations.adk import StaleSessionError, WaybookSessionService
from waybook.stores import open_store

PERSISTENT = {"adk-sqlite", "waybook-memory", "waybook-file", "waybook-sqlite"}


@pytest.fixture(params=["adk-in-memory", "adk-sqlite", "waybook-memory", "waybook-file", "waybook-sqlite"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> BaseSessionService:
    kind = request.param
    if kind == "adk-in-memory":
        return InMemorySessionService()
    if kind == "adk-sqlite":
        return SqliteSessionService(str(tmp_path / "adk.db"))
    if kind == "waybook-memory":
        return WaybookSessionService(open_store("memory:"))
    if kind == "waybook-sqlite":
        return WaybookSessionService(open_store(f"sqlite:{tmp_path / 'store.db'}"))
    return WaybookSessionService(open_store(f"file:{tmp_path / 'store'}"))


def run(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(coroutine())


# --- create and get ---------------------------------------------------------------------------------


def test_create_returns_the_session_and_get_returns_it_again(service: BaseSessionService) -> None:
    async def go() -> None:
        created = await service.create_session(app_name=APP, user_id=USER, state={"k": 1}, session_id=" s1 ")
        assert (created.id, created.app_name, created.user_id) == ("s1", APP, USER)
        assert created.state == {"k": 1}
        assert created.events == []
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        assert (got.id, got.state, got.events) == ("s1", {"k": 1}, [])
        generated = await service.create_session(app_name=APP, user_id=USER)
        assert generated.id
        assert generated.id != "s1"

    run(go)


def test_an_unknown_session_is_none(service: BaseSessionService) -> None:
    async def go() -> None:
        assert await service.get_session(app_name=APP, user_id=USER, session_id="nope") is None
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        assert await service.get_session(app_name=APP, user_id="u2", session_id="s1") is None
        assert await service.get_session(app_name="other", user_id=USER, session_id="s1") is None

    run(go)


def test_a_duplicate_session_id_is_refused(service: BaseSessionService) -> None:
    async def go() -> None:
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        with pytest.raises(AlreadyExistsError):
            await service.create_session(app_name=APP, user_id=USER, session_id="s1")

    run(go)


# --- events -------------------------------------------------------------------------------------


def test_events_come_back_in_append_order_with_their_fields(service: BaseSessionService) -> None:
    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        sent = [event(f"m{i}", timestamp=1000.0 + i) for i in range(3)]
        for e in sent:
            await service.append_event(session, e)
        assert texts(session) == ["m0", "m1", "m2"]
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        assert [(e.id, e.author, e.invocation_id, e.timestamp) for e in got.events] == [
            (e.id, e.author, e.invocation_id, e.timestamp) for e in sent
        ]
        assert texts(got) == ["m0", "m1", "m2"]
        assert got.last_update_time == pytest.approx(1002.0)

    run(go)


def test_a_partial_event_is_not_stored(service: BaseSessionService) -> None:
    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        await service.append_event(session, event("streaming", partial=True))
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        assert got.events == []

    run(go)


def test_get_session_config_filters_recent_events_and_timestamps(service: BaseSessionService) -> None:
    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        for i in range(5):
            await service.append_event(session, event(f"m{i}", timestamp=100.0 + i))

        async def get(**config: Any) -> list[str]:
            got = await service.get_session(
                app_name=APP, user_id=USER, session_id="s1", config=GetSessionConfig(**config)
            )
            assert got is not None
            return texts(got)

        assert await get(num_recent_events=2) == ["m3", "m4"]
        assert await get(num_recent_events=0) == []
        assert await get(num_recent_events=9) == ["m0", "m1", "m2", "m3", "m4"]
        assert await get(after_timestamp=102.0) == ["m2", "m3", "m4"]
        assert await get(after_timestamp=102.5) == ["m3", "m4"]
        assert await get(after_timestamp=999.0) == []
        assert await get(num_recent_events=3, after_timestamp=103.0) == ["m3", "m4"]

    run(go)


# --- state scopes --------------------------------------------------------------------------------


def test_state_scopes_app_user_session_and_temp(service: BaseSessionService) -> None:
    async def go() -> None:
        state = {"k": 1, "app:a": "A", "user:u": "U", "temp:t": "T"}
        first = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state=state)
        assert first.state == {"k": 1, "app:a": "A", "user:u": "U"}
        same_user = await service.create_session(app_name=APP, user_id=USER, session_id="s2")
        assert same_user.state == {"app:a": "A", "user:u": "U"}
        other_user = await service.create_session(app_name=APP, user_id="u2", session_id="s3")
        assert other_user.state == {"app:a": "A"}
        other_app = await service.create_session(app_name="other", user_id=USER, session_id="s4")
        assert other_app.state == {}

        delta = {"app:x": 1, "user:y": 2, "z": 3, "temp:w": 4}
        await service.append_event(first, event("hi", delta=delta))
        assert first.state["temp:w"] == 4  # temp state lives in the invocation's session object only
        assert first.events[-1].actions.state_delta == {"app:x": 1, "user:y": 2, "z": 3}
        again = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert again is not None
        assert again.state == {"k": 1, "z": 3, "app:a": "A", "app:x": 1, "user:u": "U", "user:y": 2}
        assert again.events[-1].actions.state_delta == {"app:x": 1, "user:y": 2, "z": 3}
        s2 = await service.get_session(app_name=APP, user_id=USER, session_id="s2")
        assert s2 is not None
        assert s2.state == {"app:a": "A", "app:x": 1, "user:u": "U", "user:y": 2}
        s3 = await service.get_session(app_name=APP, user_id="u2", session_id="s3")
        assert s3 is not None
        assert s3.state == {"app:a": "A", "app:x": 1}
        assert await service.get_user_state(app_name=APP, user_id=USER) == {"u": "U", "y": 2}
        assert await service.get_user_state(app_name=APP, user_id="nobody") == {}

    run(go)


# --- list and delete -----------------------------------------------------------------------------


def test_list_sessions_without_events_oldest_update_first(service: BaseSessionService) -> None:
    async def go() -> None:
        a = await service.create_session(app_name=APP, user_id=USER, session_id="a", state={"user:p": 1})
        b = await service.create_session(app_name=APP, user_id=USER, session_id="b")
        await service.create_session(app_name=APP, user_id="u2", session_id="c")
        await service.create_session(app_name="other", user_id=USER, session_id="d")
        await service.append_event(b, event("b1", timestamp=b.last_update_time + 10))
        await service.append_event(a, event("a1", timestamp=b.last_update_time + 20))
        mine = (await service.list_sessions(app_name=APP, user_id=USER)).sessions
        assert [s.id for s in mine] == ["b", "a"]
        assert all(s.events == [] for s in mine)
        assert all(s.state.get("user:p") == 1 for s in mine)
        everyone = (await service.list_sessions(app_name=APP)).sessions
        assert sorted(s.id for s in everyone) == ["a", "b", "c"]
        assert (await service.list_sessions(app_name="nothing")).sessions == []
        assert (await service.list_sessions(app_name=APP, user_id="nobody")).sessions == []

    run(go)


def test_delete_removes_the_session_and_its_id_can_be_used_again(service: BaseSessionService) -> None:
    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"k": 1})
        await service.append_event(session, event("hi"))
        await service.delete_session(app_name=APP, user_id=USER, session_id="s1")
        await service.delete_session(app_name=APP, user_id=USER, session_id="never")
        assert await service.get_session(app_name=APP, user_id=USER, session_id="s1") is None
        assert (await service.list_sessions(app_name=APP, user_id=USER)).sessions == []
        fresh = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        assert (fresh.state, fresh.events) == ({}, [])

    run(go)


def test_appending_to_a_deleted_session_is_session_not_found(service: BaseSessionService) -> None:
    async def go() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        await service.delete_session(app_name=APP, user_id=USER, session_id="s1")
        with pytest.raises(SessionNotFoundError):
            await service.append_event(session, event("late"))

    run(go)


# --- concurrency -----------------------------------------------------------------------------------


def test_a_stale_session_object_is_refused_and_nothing_is_written(
    service: BaseSessionService, request: pytest.FixtureRequest
) -> None:
    if request.node.callspec.params["service"] not in PERSISTENT:
        pytest.skip("ADK's in-memory service accepts stale session objects by design")

    async def go() -> None:
        await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        first = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        second = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert first is not None
        assert second is not None
        await service.append_event(first, event("first", timestamp=first.last_update_time + 1))
        with pytest.raises(StaleSessionError):
            await service.append_event(second, event("second", timestamp=first.last_update_time + 2))
        assert texts(second) == []  # the caller's object is unchanged too
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        assert texts(got) == ["first"]
        await service.append_event(got, event("retried", timestamp=first.last_update_time + 3))
        assert texts(got) == ["first", "retried"]

    run(go)
