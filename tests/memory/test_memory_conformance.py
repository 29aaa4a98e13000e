"""The Memory port conformance kit, run against the port on both journal adapters."""

from __future__ import annotations

import tempfile
from pathlib import Path

from waybook.journal import InMemoryJournal, JsonlJournal
from waybook.memory import DEFAULT_LIMITS, Limits, Memory
from waybook.testing._memory import MemoryPortConformance


class TestMemoryOnInMemoryJournals(MemoryPortConformance):
    def make_memory(self, *, scope: str = "agent", limits: Limits = DEFAULT_LIMITS) -> Memory:
        return Memory(InMemoryJournal(f"memory-{scope}"), scope=scope, limits=limits)


class TestMemoryOnJsonlJournals(MemoryPortConformance):
    def make_memory(self, *, scope: str = "agent", limits: Limits = DEFAULT_LIMITS) -> Memory:
        directory = Path(tempfile.mkdtemp(prefix="waybook-memory-"))
        return Memory(JsonlJournal(directory / f"{scope}.jsonl"), scope=scope, limits=limits)
