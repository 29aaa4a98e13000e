"""`WaybookSession(session_id, store, redact=True)` (issue 46): every item is masked before it is stored,
the waybook kinds say what was masked where, and the items read back are the SDK's items, masked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.openai_agents import WaybookSession
from waybook.journal import verify
from waybook.model import AssistantMessage, InvalidArgumentError, UserMessage
from waybook.stores import open_store

ITEMS: list[Any] = [
    {"role": "user", "content": f"deploy with {TOKEN.text}"},
    {
        "type": "function_call",
        "call_id": "c1",
        "name": "bash",
        "arguments": f'{{"cmd":"psql {DB.text}"}}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": f"token {TOKEN.core} ok"},
]


def converse(session: WaybookSession) -> list[Any]:
    async def go() -> list[Any]:
        await session.add_items(ITEMS)
        return await session.get_items()

    return asyncio.run(go())


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store_and_the_records_say_what_was_masked(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        session = WaybookSession("s", store, redact=True)
        items = converse(session)
        with store.open(session.journal_id) as journal:
            assert verify(journal).ok
            records = list(journal.read())
    assert_no_secret_in(tmp_path)
    assert items[0] == {"role": "user", "content": "deploy with [REDACTED:github-token]"}
    assert items[2]["output"] == "token [REDACTED:github-token] ok"
    assert DB.core not in items[1]["arguments"]
    user = next(r.body for r in records if isinstance(r.body, UserMessage))
    assert user.details is not None
    assert user.details["waybook.redacted"] == [
        {"field": "content", "block": 0, "kind": "github-token", "count": 1}
    ]
    call = next(r.body for r in records if isinstance(r.body, AssistantMessage))
    assert call.details is not None
    assert "waybook.redacted" in call.details


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        assert converse(WaybookSession("s", store)) == ITEMS
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail


def test_a_redact_option_that_is_not_one_is_refused() -> None:
    with open_store("memory:") as store, pytest.raises(InvalidArgumentError, match="WaybookSession's redact"):
        WaybookSession("s", store, redact={"on": True})  # type: ignore[arg-type]
