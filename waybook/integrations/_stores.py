"""What the integrations need from a `JournalStore`: open-or-create a journal, list journals by metadata.

Runtimes name sessions with arbitrary strings (a LangGraph thread id, an OpenAI Agents session id);
journal ids are restricted (they name files), so each integration derives its journal ids with
`journal_id_for`, a digest of the runtime's names, and keeps the names themselves in the header.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from waybook.journal import SessionJournal
from waybook.model import GENESIS, ConflictError


class StoreLike(Protocol):
    """The part of `waybook.stores.JournalStore` the integrations use."""

    def create(
        self, journal_id: str, *, role: str = "session", metadata: Mapping[str, Any] | None = None
    ) -> SessionJournal: ...

    def open(self, journal_id: str) -> SessionJournal: ...

    def exists(self, journal_id: str) -> bool: ...

    def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> Any: ...

    def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> Any: ...


def journal_id_for(prefix: str, *names: str) -> str:
    """A valid, stable journal id for a runtime's names: `prefix-<digest of each name>`.

    Each name gets its own digest, so every journal of one first name shares an id prefix.
    """
    parts = [hashlib.sha256(name.encode()).hexdigest()[:24] for name in names]
    return "-".join([prefix, *parts])


def open_or_create(store: StoreLike, journal_id: str, metadata: Mapping[str, Any]) -> SessionJournal:
    """The journal `journal_id`, created with `metadata` in its header if it does not exist yet.

    Two writers creating the same journal at once both succeed: the loser of the race opens it.
    """
    if store.exists(journal_id):
        journal = store.open(journal_id)
    else:
        try:
            journal = store.create(journal_id, role="session", metadata=metadata)
        except ConflictError:  # another writer created it first
            journal = store.open(journal_id)
    if journal.head() == GENESIS:  # pragma: no cover - every store writes the header on create
        msg = f"{journal_id}: the store created the journal without its header"
        raise RuntimeError(msg)
    return journal


def listed(store: StoreLike, metadata: Mapping[str, Any]) -> Iterator[Any]:
    """Every journal whose header metadata includes `metadata`, in creation order, page by page."""
    after: str | None = None
    while True:
        page = store.list(role="session", metadata=metadata, after=after, limit=500)
        yield from page.journals
        if page.cursor is None:
            return
        after = page.cursor
