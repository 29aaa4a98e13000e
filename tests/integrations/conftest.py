"""Stores the integrations are proven on: every integration test runs on each."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from waybook.stores import JournalStore, open_store

STORES: dict[str, Callable[[Path], JournalStore]] = {
    "memory": lambda _tmp: open_store("memory:"),
    "directory": lambda tmp: open_store(f"file:{tmp / 'store'}"),
    "sqlite": lambda tmp: open_store(f"sqlite:{tmp / 'store.db'}"),
}


@pytest.fixture(params=sorted(STORES), ids=str)
def store_url_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], JournalStore]:
    """Opens the same store (the same directory, or one shared memory store) each time it is called."""
    make = STORES[request.param]
    shared: list[JournalStore] = []

    def opener() -> JournalStore:
        if request.param == "memory":
            if not shared:
                shared.append(make(tmp_path))
            return shared[0]
        return make(tmp_path)

    return opener


@pytest.fixture
def store(store_url_factory: Callable[[], JournalStore]) -> Iterator[JournalStore]:
    opened = store_url_factory()
    yield opened
    opened.close()
