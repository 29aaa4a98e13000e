"""Agent Framework's `HistoryProvider` contract, run on its `InMemoryHistoryProvider` and on waybook's.

agent-framework-core ships no tests in its sdist; these are written from `HistoryProvider`'s documented
methods (`get_messages`, `save_messages`, and the `before_run`/`after_run` an agent calls) and checked
first on `InMemoryHistoryProvider`, the framework's default, then on `WaybookHistoryProvider` (a
directory store, opened again for every provider object, as a restarted process would). The in-memory
provider keeps a session's history in the session's `state`; each test keeps one state per session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    Content,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
)

from tests.integrations.runtime_checks import IMPLEMENTATIONS, implementation_id
from waybook.integrations.agent_framework import WaybookHistoryProvider
from waybook.stores import open_store


class Sessions:
    """A provider per call (a restart each time), and one state dict per session id."""

    def __init__(self, make: Callable[[], HistoryProvider]) -> None:
        self.make = make
        self.states: dict[str | None, dict[str, Any]] = {}

    def get(self, session_id: str | None) -> list[dict[str, Any]]:
        state = self.states.setdefault(session_id, {})
        messages = asyncio.run(self.make().get_messages(session_id, state=state))
        return [message.to_dict() for message in messages]

    def save(self, session_id: str | None, messages: Sequence[Message]) -> None:
        state = self.states.setdefault(session_id, {})
        asyncio.run(self.make().save_messages(session_id, messages, state=state))


@pytest.fixture(params=IMPLEMENTATIONS, ids=implementation_id)
def providers(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], HistoryProvider]:
    """Makes a new provider object of the implementation (on the same store, for waybook's)."""
    if request.param == "reference":
        return InMemoryHistoryProvider
    return lambda: WaybookHistoryProvider(open_store(f"file:{tmp_path / 'store'}"))


@pytest.fixture
def sessions(providers: Callable[[], HistoryProvider]) -> Sessions:
    return Sessions(providers)


def says(role: str, text: str) -> Message:
    return Message(role=role, contents=[text])


def dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.to_dict() for message in messages]


def test_a_new_session_has_no_messages(sessions: Sessions) -> None:
    assert sessions.get("new") == []


def test_saved_messages_come_back_in_order(sessions: Sessions) -> None:
    turn = [says("user", "hello"), says("assistant", "hi")]
    sessions.save("s", turn)
    sessions.save("s", [says("user", "again")])
    assert sessions.get("s") == [*dicts(turn), *dicts([says("user", "again")])]


def test_saving_the_whole_transcript_again_adds_only_what_is_new(sessions: Sessions) -> None:
    turn = [says("user", "hello"), says("assistant", "hi")]
    sessions.save("s", turn)
    sessions.save("s", [*turn, says("user", "next")])
    assert sessions.get("s") == dicts([*turn, says("user", "next")])


def test_a_repeated_user_message_is_kept(sessions: Sessions) -> None:
    sessions.save("s", [says("user", "yes")])
    sessions.save("s", [says("user", "yes")])
    assert sessions.get("s") == dicts([says("user", "yes"), says("user", "yes")])


def test_saving_nothing_changes_nothing(sessions: Sessions) -> None:
    sessions.save("s", [])
    assert sessions.get("s") == []


def test_sessions_are_kept_apart(sessions: Sessions) -> None:
    sessions.save("a", [says("user", "for a")])
    sessions.save("b", [says("user", "for b")])
    assert sessions.get("a") == dicts([says("user", "for a")])
    assert sessions.get("b") == dicts([says("user", "for b")])


def test_every_content_kind_comes_back_equal(sessions: Sessions) -> None:
    messages = [
        Message(role="system", contents=["be brief"]),
        Message(
            role="user",
            contents=["weather?", Content.from_uri("https://example.com/a.png", media_type="image/png")],
        ),
        Message(
            role="assistant",
            contents=[
                Content.from_text_reasoning(text="needs a tool"),
                Content.from_text("Checking."),
                Content.from_function_call(call_id="c1", name="weather", arguments={"city": "Oslo"}),
                Content.from_function_call(call_id="c2", name="clock", arguments='{"tz": "UTC"}'),
            ],
            author_name="helper",
            message_id="m-2",
            additional_properties={"model": "scripted"},
        ),
        Message(role="tool", contents=[Content.from_function_result(call_id="c1", result={"sky": "snow"})]),
        Message(role="tool", contents=[Content.from_function_result(call_id="c2", result="12:00")]),
        Message(role="assistant", contents=[Content.from_text("Snow.")]),
    ]
    sessions.save("s", messages)
    assert sessions.get("s") == dicts(messages)


class Scripted(BaseChatClient):  # type: ignore[type-arg]
    """A chat client that replies with how many messages it was sent."""

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> Any:
        async def reply() -> ChatResponse:
            return ChatResponse(
                messages=[Message(role="assistant", contents=[f"I was sent {len(messages)}"])]
            )

        return reply()


def test_an_agent_run_loads_and_saves_through_the_provider(providers: Callable[[], HistoryProvider]) -> None:
    async def two_runs() -> list[str]:
        agent = Agent(client=Scripted(), context_providers=[providers()])
        session = agent.create_session()
        first = await agent.run("hello", session=session)
        second = await agent.run("again", session=session)
        return [first.text, second.text]

    assert asyncio.run(two_runs()) == ["I was sent 1", "I was sent 3"]
