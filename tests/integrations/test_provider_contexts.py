"""Issue 45: an integration's resumed session offers its context as a request every provider accepts.

(Imports a private module: the history core has no public face; each runtime's adapter exposes it.)

A run that died between a function call and its output leaves the call unanswered in the journal; the
session, reopened on the same store, gives each provider a request it takes (the call answered by a
synthetic result saying no result was recorded), checked against the providers' SDK types.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("agents")

from tests.helpers.provider_checks import provider_problems
from waybook.integrations._history import Threads, extended, node
from waybook.integrations.openai_agents import WaybookSession
from waybook.model import TextBlock, ToolCallBlock
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


def _encode(message: dict[str, Any]) -> Any:
    """A runtime's JSON message as its node, the way each history integration maps its own."""
    if message["role"] == "tool":
        return node("t", "tool", message, [TextBlock(text=message["text"])], call_id=message["call_id"])
    blocks: list[Any] = [TextBlock(text=message["text"])] if message["text"] else []
    blocks += [ToolCallBlock(call_id=c, name="read_file", arguments={}) for c in message.get("calls", ())]
    return node("t", message["role"], message, blocks)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_history_core_of_the_runtimes_resumes_a_crashed_run_as_a_valid_request(
    store_url_factory: Callable[[], JournalStore], provider: str
) -> None:
    """The core under the Pydantic AI, Strands, Agent Framework and LlamaIndex integrations (each offers
    it as `for_provider`): a run that died between two parallel calls' results, reopened."""
    run = [
        {"role": "user", "text": "Read both files."},
        {"role": "assistant", "text": "", "calls": ["a", "b"]},
        {"role": "tool", "text": "first file", "call_id": "a"},
    ]
    first = Threads(store_url_factory(), runtime="t", prefix="t", fields=("id",), decode=lambda m: m)
    first.write(("c1",), lambda _: extended(run, _encode))
    resumed = Threads(store_url_factory(), runtime="t", prefix="t", fields=("id",), decode=lambda m: m)
    shown = resumed.for_provider(("c1",), provider)  # type: ignore[arg-type]
    assert provider_problems(shown) == []
    assert [(r.kind, "'b'" in r.detail) for r in shown.repairs if r.kind == "orphaned_call"] == [
        ("orphaned_call", True)
    ]
    assert resumed.for_provider(("none",), provider).messages == ()  # type: ignore[arg-type]
