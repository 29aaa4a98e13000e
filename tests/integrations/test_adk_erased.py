"""Issue 46 for the Google ADK session service: after `erase`, `get_session` still loads the session and
shows each erased event as an event holding the placeholder naming its erasure (ADK's own `Event` model
validates it, and ADK's contents builder puts it in the model's request), never the erased text; an
erased creation or state record costs its state, never the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.flows.llm_flows.contents import _get_contents

from tests.helpers.adk import APP, USER, event, texts
from tests.helpers.erased_sessions import REASON
from waybook.integrations.adk import WaybookSessionService
from waybook.journal import erase, verify
from waybook.model import erased_placeholder
from waybook.stores import JournalStore, open_store

SECRET = "my key is vault-secret-4f1a"


def session_journal(store: JournalStore, runtime: str = "google-adk") -> str:
    (journal_id,) = [i.journal_id for i in store.list() if i.metadata.get("runtime") == runtime]
    return journal_id


def erased(tmp_path: Path, seqs: list[int], runtime: str = "google-adk") -> tuple[WaybookSessionService, int]:
    """A session with a creation record (seq 2) and three events (seqs 3 to 5), `seqs` of the journal of
    `runtime` erased; a fresh service (another process) to read it, and the erasure's seq."""
    url = f"file:{tmp_path}"
    service = WaybookSessionService(open_store(url))

    async def write() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1", state={"k": 1})
        await service.append_event(session, event("hello", delta={"user:lang": "en"}))
        await service.append_event(session, event(SECRET))
        await service.append_event(session, event("bye"))

    asyncio.run(write())
    store = open_store(url)
    with store.open(session_journal(store, runtime)) as journal:
        receipt = erase(journal, seqs, reason=REASON)
        assert verify(journal).ok
    return WaybookSessionService(open_store(url)), receipt.erasures[0].seq


def get(service: WaybookSessionService) -> Any:
    got = asyncio.run(service.get_session(app_name=APP, user_id=USER, session_id="s1"))
    assert got is not None
    return got


def request_text(session: Any) -> str:
    return str(_get_contents(None, session.events, "agent"))


def test_an_erased_event_is_the_placeholder_in_its_place_and_in_the_model_s_contents(tmp_path: Path) -> None:
    """Before, get_session failed with TypeError ('NoneType' object is not subscriptable)."""
    service, by = erased(tmp_path, [4])
    session = get(service)
    assert texts(session) == ["hello", erased_placeholder(by, REASON), "bye"]
    contents = request_text(session)
    assert SECRET not in contents
    assert erased_placeholder(by, REASON) in contents
    assert session.state["k"] == 1
    assert len({e.id for e in session.events}) == 3


def test_every_event_erased_still_loads_and_the_next_event_appends(tmp_path: Path) -> None:
    service, by = erased(tmp_path, [3, 4, 5])
    session = get(service)
    assert texts(session) == [erased_placeholder(by, REASON)] * 3
    asyncio.run(service.append_event(session, event("again")))
    assert texts(get(service))[-1] == "again"


def test_an_erased_creation_record_costs_its_state_not_the_session(tmp_path: Path) -> None:
    service, _ = erased(tmp_path, [2])
    session = get(service)
    assert texts(session) == ["hello", SECRET, "bye"]
    assert "k" not in session.state


def test_an_erased_state_record_of_the_user_costs_its_state_not_the_user(tmp_path: Path) -> None:
    service, _ = erased(tmp_path, [2], runtime="google-adk-state")
    state = asyncio.run(service.get_user_state(app_name=APP, user_id=USER))
    assert state == {}
    assert texts(get(service))[0] == "hello"


def test_a_service_that_read_the_session_before_the_erasure_shows_the_placeholder_after_it(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path}"
    service = WaybookSessionService(open_store(url))

    async def write() -> None:
        session = await service.create_session(app_name=APP, user_id=USER, session_id="s1")
        await service.append_event(session, event(SECRET))
        await service.append_event(session, event("bye"))

    asyncio.run(write())
    assert texts(get(service)) == [SECRET, "bye"]  # read, and held, before the erasure
    store = open_store(url)
    with store.open(session_journal(store)) as journal:
        by = erase(journal, [3], reason=REASON).erasures[0].seq
    session = get(service)
    assert texts(session) == [erased_placeholder(by, REASON), "bye"]
    assert SECRET not in request_text(session)
