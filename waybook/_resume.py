"""`resume(path)`: open a session file, replay it and render its model context, decoding each record once.

What a runtime does when it picks a conversation up again. Done apart, the open decodes every record
to prove the file, a replay reads and decodes them again, and rendering the context reads the records it
shows a third time. Here the records the open decoded (or, with a checkpoint, read once after it) are
folded and rendered directly, and the Session starts at the head without reading anything.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from waybook._session import Session
from waybook.journal import JsonlJournal
from waybook.model import InvalidArgumentError, JournalError, StorageError
from waybook.projections import (
    ContextMessage,
    ContextProjection,
    ContextState,
    Provider,
    ProviderContext,
    for_provider,
    render_context_from,
)


@attrs.frozen
class Resumed:
    """An open session: its writer, its tree and context state, and the context at the active leaf."""

    session: Session
    state: ContextState
    context: tuple[ContextMessage, ...]

    def for_provider(self, provider: Provider, *, blobs: Any = None) -> ProviderContext:
        """`context` as `provider`'s request JSON, with every repair reported (`for_provider`)."""
        return for_provider(self.context, provider, blobs=blobs)

    @property
    def journal(self) -> JsonlJournal:
        journal = self.session.journal
        assert isinstance(journal, JsonlJournal)
        return journal


def resume(path: str | os.PathLike[str], *, actor: str | None = None, **options: Any) -> Resumed:
    """Open the JSONL session at `path` (options as for JsonlJournal), with its context at the leaf.

    Holds every record in memory while it folds them (they are let go after, apart from those the
    context shows): meant for sessions, not for million-record files (use `replay` and `context_at`).
    Close the journal (`resumed.journal.close()`) when done. A path with no journal is an error (a
    resume of a typo never creates an empty session) unless `create=True` is passed.
    """
    if not isinstance(path, (str, os.PathLike)):
        msg = f"resume takes the path of a session's .jsonl file, not {type(path).__name__}"
        raise InvalidArgumentError(msg)
    options.setdefault("create", False)
    try:
        journal, records, proved = JsonlJournal.open_decoded_proved(path, **options)
    except JournalError:
        raise
    except OSError as exc:  # a path the system refuses outright (too long, a loop of links)
        shown = str(os.fspath(path))
        shown = f"{shown[:80]}..." if len(shown) > 80 else shown
        msg = f"{shown}: {exc.strerror or exc}; pass the path of a session's .jsonl file"
        raise StorageError(msg) from None
    try:
        # When the open proved every record's chain from seq 1, the fold checks only each run's ends.
        projection = ContextProjection()
        state = projection.apply_many(projection.initial(), records, chained=proved)
        context = render_context_from(state.tree, state.refs, records)
        session = Session(journal, actor=actor)
    except BaseException:
        journal.close()
        raise
    return Resumed(session, state, context)
