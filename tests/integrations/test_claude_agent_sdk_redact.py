"""`WaybookSessionStore(store, redact=True)` (issue 46): transcript entries and the session summary
folded from them are masked before they are stored; the SDK's conformance suite passes with masking on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")

import anyio
from claude_agent_sdk.testing import run_session_store_conformance

from tests.helpers.redaction import DB, STORE_URLS, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.stores import open_store

KEY = {"project_key": "proj", "session_id": "sess"}


def entries() -> list[dict[str, Any]]:
    return [
        {"type": "user", "uuid": "a", "message": {"role": "user", "content": f"deploy with {TOKEN.text}"}},
        {"type": "assistant", "uuid": "b", "message": {"role": "assistant", "content": f"using {DB.text}"}},
    ]


def converse(store: WaybookSessionStore) -> Any:
    async def run() -> Any:
        await store.append(KEY, entries())  # type: ignore[arg-type]
        await store.append(KEY, entries())  # a retried append: deduplicated by uuid
        return await store.load(KEY)  # type: ignore[arg-type]

    return anyio.run(run)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_no_secret_reaches_the_store(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        loaded = converse(WaybookSessionStore(store, redact=True))
    assert loaded[0]["message"]["content"] == "deploy with [REDACTED:github-token]"
    assert len(loaded) == 2
    assert_no_secret_in(tmp_path)


@pytest.mark.parametrize("scheme", sorted(STORE_URLS))
def test_without_redact_the_secret_is_stored(tmp_path: Path, scheme: str) -> None:
    with open_store(STORE_URLS[scheme](tmp_path)) as store:
        converse(WaybookSessionStore(store))
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail


def test_the_sdks_conformance_suite_passes_with_masking_on() -> None:
    async def run() -> None:
        await run_session_store_conformance(lambda: WaybookSessionStore(open_store("memory:"), redact=True))  # type: ignore[arg-type]

    anyio.run(run)
