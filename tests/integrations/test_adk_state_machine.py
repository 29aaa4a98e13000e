"""Random ADK programs give the same sessions, state and events on waybook as on ADK's in-memory service.

Two WaybookSessionService instances share one directory store (two processes); each step goes to one of
them, chosen at random, and always with a freshly read session (ADK's in-memory service has no stale
check to compare against; the contract test covers staleness).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.sessions import InMemorySessionService
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.helpers.adk import event
from waybook.integrations.adk import WaybookSessionService
from waybook.stores import open_store

APPS = st.sampled_from(["app", "other"])
USERS = st.sampled_from(["u1", "u2"])
SESSIONS = st.sampled_from(["s1", "s2", "s3"])
KEYS = st.sampled_from(["k", "app:a", "user:u", "temp:t"])
VALUES = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"]), st.none())


def view(session: Any) -> Any:
    if session is None:
        return None
    return (session.id, session.state, [(e.id, e.content.parts[0].text) for e in session.events])


class SameAsInMemory(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="waybook-adk-"))
        url = f"file:{self.folder}"
        self.ours = [WaybookSessionService(open_store(url)), WaybookSessionService(open_store(url))]
        self.reference = InMemorySessionService()
        self.clock = 1_000.0
        self.count = 0

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def both(self, call: Any, writer: int) -> tuple[Any, Any]:
        async def outcome(service: Any) -> Any:
            try:
                return ("ok", await call(service))
            except AlreadyExistsError:
                return ("exists", None)

        return asyncio.run(outcome(self.reference)), asyncio.run(outcome(self.ours[writer]))

    @rule(app=APPS, user=USERS, sid=SESSIONS, key=KEYS, value=VALUES, writer=st.integers(0, 1))
    def create(self, app: str, user: str, sid: str, key: str, value: Any, writer: int) -> None:
        async def call(service: Any) -> Any:
            return view(
                await service.create_session(app_name=app, user_id=user, session_id=sid, state={key: value})
            )

        reference, ours = self.both(call, writer)
        assert ours == reference

    @rule(app=APPS, user=USERS, sid=SESSIONS, key=KEYS, value=VALUES, writer=st.integers(0, 1))
    def append(self, app: str, user: str, sid: str, key: str, value: Any, writer: int) -> None:
        self.clock += 1
        self.count += 1
        sent = event(f"m{self.count}", delta={key: value}, timestamp=self.clock, id=f"e{self.count}")

        async def call(service: Any) -> Any:
            session = await service.get_session(app_name=app, user_id=user, session_id=sid)
            if session is None:
                return None
            await service.append_event(session, sent.model_copy(deep=True))
            return view(session)

        reference, ours = self.both(call, writer)
        assert ours == reference

    @rule(app=APPS, user=USERS, sid=SESSIONS, writer=st.integers(0, 1))
    def delete(self, app: str, user: str, sid: str, writer: int) -> None:
        async def call(service: Any) -> Any:
            await service.delete_session(app_name=app, user_id=user, session_id=sid)

        reference, ours = self.both(call, writer)
        assert ours == reference

    @rule(
        app=APPS,
        user=USERS,
        sid=SESSIONS,
        recent=st.one_of(st.none(), st.integers(0, 3)),
        writer=st.integers(0, 1),
    )
    def get(self, app: str, user: str, sid: str, recent: int | None, writer: int) -> None:
        from google.adk.sessions.base_session_service import GetSessionConfig

        async def call(service: Any) -> Any:
            config = GetSessionConfig(num_recent_events=recent)
            return view(await service.get_session(app_name=app, user_id=user, session_id=sid, config=config))

        reference, ours = self.both(call, writer)
        assert ours == reference

    @invariant()
    def listings_and_user_state_agree(self) -> None:
        for app in ("app", "other"):
            for user in (None, "u1", "u2"):

                async def call(service: Any, app: str = app, user: str | None = user) -> Any:
                    listed = (await service.list_sessions(app_name=app, user_id=user)).sessions
                    return sorted((s.user_id, s.id, tuple(sorted(s.state.items(), key=str))) for s in listed)

                reference, ours = self.both(call, 0)
                assert ours == reference
            for user in ("u1", "u2"):

                async def state(service: Any, app: str = app, user: str = user) -> Any:
                    return await service.get_user_state(app_name=app, user_id=user)

                reference, ours = self.both(state, 1)
                assert ours == reference


SameAsInMemory.TestCase.settings = settings(max_examples=15, stateful_step_count=15, deadline=None)
test_random_programs_match_adks_in_memory_service = SameAsInMemory.TestCase
