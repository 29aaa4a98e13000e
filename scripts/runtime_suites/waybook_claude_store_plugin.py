"""A pytest plugin that runs the Claude Agent SDK's own store tests against WaybookSessionStore.

The SDK's tests exercise its helpers (resume, listing, import, fork, the transcript mirror) through
`InMemorySessionStore`. This plugin puts a waybook-backed store under that name before the tests are
imported: each instance is a WaybookSessionStore on a fresh waybook store (WAYBOOK_STORE=memory, the
default, or file for a directory store in a temporary directory), plus the two test helpers the SDK's
class has (`get_entries`, `size`, `clear`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import claude_agent_sdk
import claude_agent_sdk._internal.session_store as sdk_store

from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.stores import open_store


def _fresh_store() -> Any:
    if os.environ.get("WAYBOOK_STORE", "memory") == "file":
        return open_store(f"file:{tempfile.mkdtemp(prefix='waybook-claude-')}")
    return open_store("memory:")


class WaybookBackedSessionStore(WaybookSessionStore):
    """WaybookSessionStore with the SDK test helpers of InMemorySessionStore."""

    def __init__(self) -> None:
        super().__init__(_fresh_store())

    def get_entries(self, key: Any) -> list[Any]:
        tail = self._transcripts.tail(
            (key["project_key"], key["session_id"], key.get("subpath") or ""), create=False
        )
        return list(tail.state.entries) if tail is not None else []

    def clear(self) -> None:
        for key, _ in list(self._transcripts.listed()):
            self._transcripts.purge(key, reason="InMemorySessionStore.clear (SDK test helper)")

    @property
    def size(self) -> int:
        return sum(
            1 for key, _ in self._transcripts.listed() if not key[2] and self.get_entries(_as_key(key))
        )


def _as_key(key: tuple[str, ...]) -> dict[str, str]:
    return {"project_key": key[0], "session_id": key[1]}


claude_agent_sdk.InMemorySessionStore = WaybookBackedSessionStore  # type: ignore[misc]
sdk_store.InMemorySessionStore = WaybookBackedSessionStore  # type: ignore[misc]
