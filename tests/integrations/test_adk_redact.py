"""`WaybookSessionService(store, redact=True)` (issue 46): events, their state deltas and a session's
initial state are masked before they are stored; an equal redelivery of an event holding a secret is
compared as stored, so it is stored once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from tests.helpers.adk import APP, USER, event, texts
from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.adk import WaybookSessionService
from waybook.stores import open_store


def converse(service: WaybookSessionService) -> list[str]:
    async def go() -> list[str]:
        session = await service.create_session(
            app_name=APP, user_id=USER, session_id="s1", state={"db": DB.text}
        )
        sent = event(f"deploy with {TOKEN.text}", delta={"user:token": TOKEN.core})
        await service.append_event(session, sent)
        await service.append_event(session, sent)  # an equal redelivery
        got = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
        assert got is not None
        return texts(got)

    return asyncio.run(go())


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_a_redelivery_is_stored_once(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        assert converse(WaybookSessionService(store, redact=True)) == ["deploy with [REDACTED:github-token]"]
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        assert converse(WaybookSessionService(store)) == [f"deploy with {TOKEN.text}"]
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail
