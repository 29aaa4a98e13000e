"""Copied by scripts/runtime_suites/openai_agents.sh over the SDK's tests/utils/simple_session.py.

The SDK's tests keep conversation history in `SimpleListSession` (and its `CountingSession` and
`IdStrippingSession` variants). Here the same three classes, with the same constructors and
attributes, are waybook's `WaybookSession`, each on a fresh store of its own: a directory store (JSONL
files on disk) by default, or a memory store with WAYBOOK_SESSION=memory.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any, cast

from agents.items import TResponseInputItem

from waybook.integrations.openai_agents import WaybookSession
from waybook.stores import open_store

_ROOT = tempfile.mkdtemp(prefix="waybook-openai-agents-")
atexit.register(shutil.rmtree, _ROOT, True)


def _fresh_store() -> Any:
    if os.environ.get("WAYBOOK_SESSION", "file") == "memory":
        return open_store("memory:")
    return open_store(f"file:{tempfile.mkdtemp(dir=_ROOT)}")


class SimpleListSession(WaybookSession):
    """The SDK tests' in-memory session helper, as a waybook session on a store of its own.

    The helper has none of the SDK's optional compaction hooks, and the tests that use it expect the
    SDK's behaviour for such a store; so they are switched off here, unless WAYBOOK_SESSION_HOOKS=1.
    (waybook's own tests cover the hooks: tests/integrations/test_openai_agents_session.py.)
    """

    if os.environ.get("WAYBOOK_SESSION_HOOKS") != "1":
        _atomic_replace_items = None  # type: ignore[assignment]
        _get_compaction_snapshot = None  # type: ignore[assignment]

    def __init__(self, session_id: str = "test", history: list[TResponseInputItem] | None = None) -> None:
        super().__init__(session_id, _fresh_store())
        self.session_settings = None
        self._ignore_ids_for_matching = False
        if history:
            self.add_items_now(list(history))

    @property
    def saved_items(self) -> list[TResponseInputItem]:
        """What the helper's tests inspect: the session's items as they are now."""
        return cast(list[TResponseInputItem], self.items_now())

    @property
    def _items(self) -> list[TResponseInputItem]:
        """The helper's own list, which some tests read directly."""
        return self.saved_items


class CountingSession(SimpleListSession):
    """Counts `pop_item` calls (the SDK's rewind tests)."""

    def __init__(self, session_id: str = "test", history: list[TResponseInputItem] | None = None) -> None:
        super().__init__(session_id=session_id, history=history)
        self.pop_calls = 0

    async def pop_item(self) -> TResponseInputItem | None:
        self.pop_calls += 1
        return cast("TResponseInputItem | None", await super().pop_item())


class IdStrippingSession(CountingSession):
    """Drops item ids on add, as hosted stores that assign their own ids do."""

    def __init__(self, session_id: str = "test", history: list[TResponseInputItem] | None = None) -> None:
        super().__init__(session_id=session_id, history=history)
        self._ignore_ids_for_matching = True

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        stripped = [
            cast(TResponseInputItem, {k: v for k, v in item.items() if k != "id"})
            if isinstance(item, dict)
            else item
            for item in items
        ]
        await super().add_items(stripped)
