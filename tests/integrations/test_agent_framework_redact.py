"""`WaybookHistoryProvider(store, redact=True)` (issue 46): messages are masked before they are stored,
and `save_messages` finds the new messages by comparing the given ones masked with the stored ones, so
a history saved twice with a secret in it appends nothing the second time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

from agent_framework import Message

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.agent_framework import WaybookHistoryProvider
from waybook.stores import open_store


def history() -> list[Message]:
    return [
        Message(role="user", contents=[f"deploy with {TOKEN.text}"]),
        Message(role="assistant", contents=[f"connected to {DB.text}"]),
    ]


def save_twice(provider: WaybookHistoryProvider) -> list[str]:
    async def go() -> list[str]:
        await provider.save_messages("s", history())
        loaded = await provider.get_messages("s")
        await provider.save_messages("s", [*loaded, *history()[len(loaded) :]])  # nothing new
        return [message.text for message in await provider.get_messages("s")]

    return asyncio.run(go())


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_a_history_saved_twice_appends_nothing(
    tmp_path: Path, scheme: str
) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        provider = WaybookHistoryProvider(store, redact=True)
        texts = save_twice(provider)
        journal_id = provider.journal_id("s")
        assert journal_id is not None
        with store.open(journal_id) as journal:
            head = journal.head()
        asyncio.run(provider.save_messages("s", history()))  # the history as given, secrets and all
        with store.open(journal_id) as journal:
            assert journal.head() == head
    assert texts[0] == "deploy with [REDACTED:github-token]"
    assert len(texts) == 2
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        assert len(save_twice(WaybookHistoryProvider(store))) == 2
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail
