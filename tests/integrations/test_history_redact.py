"""`redact=` on the chat-history integrations (issue 46), proven on the path they share
(waybook.integrations._history, used by Pydantic AI, Strands, Agent Framework and LlamaIndex, whose
runtimes are installed only in their suites' venvs): every message is masked before it is appended, the
record says what was masked where, and a history given again is compared as stored, so writing it twice
appends nothing the second time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook._masking import SecretMask
from waybook.integrations._history import Threads, node, replaced
from waybook.journal import verify
from waybook.model import AnyBody, TextBlock, UserMessage
from waybook.stores import open_store

NAMESPACE = "chat"
KEY = ("conversation",)


def encode(message: dict[str, Any]) -> AnyBody:
    return node(NAMESPACE, message["role"], message, [TextBlock(text=message["text"])])


def history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "text": f"deploy with {TOKEN.text} please"},
        {"role": "assistant", "text": f"connected to {DB.text}", "extra": {"env": TOKEN.core}},
    ]


def threads(store: Any, mask: SecretMask | None) -> Threads:
    return Threads(
        store,
        runtime="chat",
        prefix="chat",
        fields=("key",),
        decode=lambda b: b.details[NAMESPACE] if hasattr(b, "details") else None,
        mask=mask,
    )


def write_history(url: str, *, mask: SecretMask | None) -> list[Any]:
    with open_store(url) as store:
        chats = threads(store, mask)
        chats.write(KEY, lambda thread: replaced(thread, history(), encode, "set"), checked=True)
        journal_id = chats.journal_id(KEY)
        assert journal_id is not None
        with store.open(journal_id) as journal:
            assert verify(journal).ok
            return list(journal.read())


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_the_stored_bytes_hold_no_secret_and_each_message_says_what_was_masked_where(
    tmp_path: Path, scheme: str
) -> None:
    records = write_history(STORE_URLS[scheme](tmp_path), mask=SecretMask())
    assert_no_secret_in(tmp_path)
    user = records[1].body
    assert isinstance(user, UserMessage)
    assert user.details is not None
    assert user.details["waybook.redacted"] == [
        {"field": "content", "block": 0, "kind": "github-token", "count": 1},
        {"field": "details", "kind": "github-token", "count": 1},
    ]
    assert user.details[NAMESPACE]["text"] == "deploy with [REDACTED:github-token] please"


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored_as_given(tmp_path: Path, scheme: str) -> None:
    write_history(STORE_URLS[scheme](tmp_path), mask=None)
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail


@pytest.mark.parametrize("mask", [SecretMask(), None], ids=["redacted", "plain"])
def test_writing_the_same_history_twice_appends_nothing_the_second_time(mask: SecretMask | None) -> None:
    with open_store("memory:") as store:
        chats = threads(store, mask)
        chats.write(KEY, lambda thread: replaced(thread, history(), encode, "set"), checked=True)
        journal_id = chats.journal_id(KEY)
        assert journal_id is not None
        head = store.open(journal_id).head()
        again = chats.write(KEY, lambda thread: replaced(thread, history(), encode, "set"), checked=True)
        assert store.open(journal_id).head() == head
        assert len(again.messages()) == 2


def test_a_history_with_one_message_changed_keeps_the_shared_masked_prefix() -> None:
    with open_store("memory:") as store:
        chats = threads(store, SecretMask())
        chats.write(KEY, lambda thread: replaced(thread, history(), encode, "set"), checked=True)
        edited = [*history()[:1], {"role": "assistant", "text": "edited"}]
        thread = chats.write(KEY, lambda thread: replaced(thread, edited, encode, "edit"), checked=True)
        assert [m["text"] for m in thread.messages()] == [
            "deploy with [REDACTED:github-token] please",
            "edited",
        ]
        assert len(thread.nodes) == 3  # the masked first message is shared, not written again
