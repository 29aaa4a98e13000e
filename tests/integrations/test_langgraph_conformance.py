"""LangGraph's own checkpointer conformance suite (langgraph-checkpoint-conformance) on WaybookSaver.

Every base capability and every extended capability the saver implements (delete_for_runs,
copy_thread, prune) must pass on every store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from waybook.integrations.langgraph import WaybookSaver
from waybook.stores import JournalStore


def test_waybook_saver_passes_every_conformance_capability(
    store_url_factory: Callable[[], JournalStore],
) -> None:
    @checkpointer_test(name="WaybookSaver")
    async def waybook_saver() -> AsyncIterator[WaybookSaver]:
        store = store_url_factory()
        with WaybookSaver(store) as saver:
            yield saver

    report = asyncio.run(validate(waybook_saver))
    failures = {name: result.failures for name, result in report.results.items() if result.passed is not True}
    assert not failures, failures
    assert set(report.results) == {c.value for c in ALL_CAPABILITIES}
    assert all(result.detected for result in report.results.values())
    assert sum(result.tests_passed for result in report.results.values()) >= 80
