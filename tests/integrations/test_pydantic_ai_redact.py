"""`WaybookMessageHistory(store, conversation_id, redact=True)` (issue 46): a run's messages are masked
before they are stored, the record says what was masked where, and the next run reads them masked."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.pydantic_ai import WaybookMessageHistory
from waybook.model import UserMessage
from waybook.stores import open_store


def agent() -> Agent[None, str]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(content=f"connected to {DB.text}")])

    return Agent(FunctionModel(model))


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_the_record_says_what_was_masked(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        history = WaybookMessageHistory(store, "c", redact=True)
        history.run_sync(agent(), f"deploy with {TOKEN.text}")
        history.run_sync(agent(), "again")
        assert len(history.messages()) == 4
        journal_id = history.journal_id
        assert journal_id is not None
        with store.open(journal_id) as journal:
            user = next(r.body for r in journal.read() if isinstance(r.body, UserMessage))
    assert user.details is not None
    assert {"field": "content", "block": 0, "kind": "github-token", "count": 1} in user.details[
        "waybook.redacted"
    ]
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        WaybookMessageHistory(store, "c").run_sync(agent(), f"deploy with {TOKEN.text}")
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail
