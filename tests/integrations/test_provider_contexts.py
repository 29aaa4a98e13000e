"""Issue 45: an integration's resumed session offers its context as a request every provider accepts.

A run that died between a function call and its output leaves the call unanswered in the journal; the
session, reopened on the same store, gives each provider a request it takes (the call answered by a
synthetic result saying no result was recorded), checked against the providers' SDK types.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

pytest.importorskip("agents")

from tests.helpers.provider_checks import provider_problems
from waybook.integrations.openai_agents import WaybookSession
from waybook.projections import NO_RESULT_RECORDED, PROVIDERS
from waybook.stores import JournalStore

CRASHED_RUN = [
    {"role": "user", "content": "What is in data.csv?"},
    {"role": "system", "content": "Be terse."},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read_file",
        "arguments": '{"path": "data.csv"}',
        "id": "fc_1",
        "status": "completed",
    },
]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_resumed_openai_agents_session_that_crashed_mid_call_is_a_valid_request(
    store_url_factory: Callable[[], JournalStore], provider: str
) -> None:
    first = WaybookSession("run-1", store_url_factory())
    asyncio.run(first.add_items(CRASHED_RUN))
    first.close()
    resumed = WaybookSession("run-1", store_url_factory())
    shown = resumed.for_provider(provider)  # type: ignore[arg-type]
    assert provider_problems(shown) == []
    assert [r.kind for r in shown.repairs if r.kind == "orphaned_call"] == ["orphaned_call"]
    assert NO_RESULT_RECORDED in str(shown.messages)
    assert len(asyncio.run(resumed.get_items())) == 3  # the journal still holds what happened
    resumed.close()
