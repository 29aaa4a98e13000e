"""Adapter factories: every adapter passes the same conformance suite unchanged.

To add an adapter, add a factory here: a callable taking a pytest tmp_path and returning a fresh, empty
journal, plus a reopen callable (None where the adapter does not persist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal


@attrs.frozen
class Adapter:
    name: str
    make: Callable[[Path], SessionJournal]
    reopen: Callable[[SessionJournal], SessionJournal] | None = None


def _reopen_jsonl(journal: SessionJournal) -> SessionJournal:
    assert isinstance(journal, JsonlJournal)
    journal.close()
    return JsonlJournal(journal.path, create=False)


ADAPTERS: list[Adapter] = [
    Adapter("in_memory", lambda _tmp: InMemoryJournal("conformance")),
    Adapter("jsonl", lambda tmp: JsonlJournal(tmp / "journal.jsonl"), _reopen_jsonl),
    Adapter(
        "jsonl_group",
        lambda tmp: JsonlJournal(tmp / "journal.jsonl", durability="group"),
        _reopen_jsonl,
    ),
]


@pytest.fixture(params=ADAPTERS, ids=lambda a: a.name)
def adapter(request: pytest.FixtureRequest) -> Adapter:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def journal(adapter: Adapter, tmp_path: Path) -> Iterator[SessionJournal]:
    with adapter.make(tmp_path) as j:
        yield j
