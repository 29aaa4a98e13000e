"""`WaybookChatStore(store, redact=True)` (issue 46): messages are masked before they are stored, and
`set_messages` compares the given messages masked with the stored ones, so setting the same history with
a secret in it twice appends nothing the second time."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import ChatMessage

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.llama_index import WaybookChatStore
from waybook.stores import open_store


def history() -> list[ChatMessage]:
    return [
        ChatMessage(role="user", content=f"deploy with {TOKEN.text}"),
        ChatMessage(role="assistant", content=f"connected to {DB.text}"),
    ]


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_the_same_history_set_twice_appends_nothing(
    tmp_path: Path, scheme: str
) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        chats = WaybookChatStore(store, redact=True)
        chats.set_messages("k", history())
        journal_id = chats.journal_id("k")
        assert journal_id is not None
        with store.open(journal_id) as journal:
            head = journal.head()
        chats.set_messages("k", history())
        with store.open(journal_id) as journal:
            assert journal.head() == head
        assert chats.get_messages("k")[0].content == "deploy with [REDACTED:github-token]"
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        WaybookChatStore(store).set_messages("k", history())
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail
