"""`WaybookSessionRepository(store, redact=True)` (issue 46): messages and agent state are masked before
they are stored; `update_message` compares the messages masked, so the unchanged ones are not written
again."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("strands")

from strands.types.session import Session, SessionAgent, SessionMessage, SessionType

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.strands import WaybookSessionRepository
from waybook.model import AssistantMessage, UserMessage
from waybook.stores import open_store


def says(role: str, text: str, message_id: int) -> SessionMessage:
    return SessionMessage(message={"role": role, "content": [{"text": text}]}, message_id=message_id)  # type: ignore[typeddict-item]


def converse(repository: WaybookSessionRepository) -> list[str]:
    repository.create_session(Session(session_id="s", session_type=SessionType.AGENT))
    agent = SessionAgent(agent_id="a", state={"token": TOKEN.core}, conversation_manager_state={})
    repository.create_agent("s", agent)
    repository.create_message("s", "a", says("user", f"deploy with {TOKEN.text}", 0))
    repository.create_message("s", "a", says("assistant", "on it", 1))
    repository.update_message("s", "a", says("assistant", f"connected to {DB.text}", 1))
    return [m.to_message()["content"][0]["text"] for m in repository.list_messages("s", "a")]


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_an_update_keeps_the_masked_messages_before_it(
    tmp_path: Path, scheme: str
) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        repository = WaybookSessionRepository(store, redact=True)
        texts = converse(repository)
        journal_id = repository.journal_ids("s", "a")
        assert journal_id is not None
        with store.open(journal_id) as journal:
            nodes = [r.body for r in journal.read() if isinstance(r.body, UserMessage | AssistantMessage)]
    assert texts[0] == "deploy with [REDACTED:github-token]"
    assert len(nodes) == 3  # the masked first message is shared by both branches, never written again
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSessionRepository(store))
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail
