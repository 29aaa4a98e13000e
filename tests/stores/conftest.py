"""Store factories: every store passes the same store suite unchanged.

To add a store, add a `StoreKind`: how to make its URL in a pytest tmp_path, and whether it persists
(so the suite can reopen it) and is shared across processes (so the suite can race processes on it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from tests.helpers.pg_fixtures import pg_store_url
from waybook.stores import JournalStore, open_store


@attrs.frozen
class StoreKind:
    name: str
    url: Callable[[Path], str]
    persistent: bool = True
    """Reopening the URL finds what was written (and other processes share it)."""


STORES: list[StoreKind] = [
    StoreKind("memory", lambda _tmp: "memory:", persistent=False),
    StoreKind("directory", lambda tmp: f"file:{tmp}/store"),
    # every open and close brings the index forward, and every reopen starts from it (docs/stores.md)
    StoreKind("directory-indexed", lambda tmp: f"file:{tmp}/store?snapshot_tail=0"),
    StoreKind("sqlite", lambda tmp: f"sqlite:{tmp}/store.db"),
    StoreKind("postgresql", lambda _tmp: pg_store_url()),
]


@pytest.fixture(params=STORES, ids=lambda k: k.name)
def kind(request: pytest.FixtureRequest) -> StoreKind:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def url(kind: StoreKind, tmp_path: Path) -> str:
    return kind.url(tmp_path)


@pytest.fixture
def store(url: str) -> Iterator[JournalStore]:
    with open_store(url) as s:
        yield s
