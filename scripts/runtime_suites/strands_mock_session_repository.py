"""Strands' test repository (tests/fixtures/mock_session_repository.py), replaced by waybook's.

scripts/runtime_suites/strands.sh copies this file over the SDK's own mock, so every Strands test that
builds a `MockedSessionRepository()` gets a `WaybookSessionRepository` on a store of its own: a new
directory store (WAYBOOK_STORE=file, the default) or a new memory store (WAYBOOK_STORE=memory).
"""

import os
import tempfile

from waybook.integrations.strands import WaybookSessionRepository
from waybook.stores import open_store


class MockedSessionRepository(WaybookSessionRepository):
    """A waybook session repository on a new store, as the SDK's mock is a new in-memory one."""

    def __init__(self) -> None:
        if os.environ.get("WAYBOOK_STORE", "file") == "memory":
            super().__init__(open_store("memory:"))
        else:
            super().__init__(open_store(f"file:{tempfile.mkdtemp(prefix='waybook-strands-')}"))
