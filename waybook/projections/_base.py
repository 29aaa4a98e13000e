"""The projection protocol: a pure fold over records, and helpers that run it.

A projection is `initial()` and `apply(state, record) -> state`. It never does I/O, reads a clock or draws
randomness, so the same records always fold to the same state. Each state remembers the head it has
seen (`seq`, `digest`), so a caller applies only records after it: that is incremental replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Generic, Protocol, TypeVar

from waybook.journal import SessionJournal
from waybook.model import Head, JournalError, Record


class ProjectionState(Protocol):
    """What every projection state exposes: the head (seq, digest) of the last record it applied."""

    @property
    def seq(self) -> int: ...

    @property
    def digest(self) -> str: ...


S = TypeVar("S", bound=ProjectionState)


class Projection(Protocol[S]):
    """A named, versioned fold. `tag` names its snapshot format, like a wire tag."""

    @property
    def tag(self) -> str: ...

    def initial(self) -> S: ...

    def apply(self, state: S, record: Record) -> S: ...


class ProjectionOrderError(JournalError):
    """A record was applied out of order: projections take every record once, in seq order."""


def check_next(state: ProjectionState, record: Record) -> None:
    """Refuse a record that does not directly follow the state's head."""
    if record.seq != state.seq + 1 or (record.prev != state.digest):
        msg = (
            f"cannot apply seq {record.seq} to a projection at seq {state.seq}: records must be applied "
            "once each, in order, from the same history"
        )
        raise ProjectionOrderError(msg)


def fold(projection: Projection[S], records: Iterable[Record], state: S | None = None) -> S:
    """Apply `records` in order to `state` (or to a fresh initial state) and return it.

    A projection with an `apply_many(state, records)` (the same result as `apply` one by one, faster)
    is given the records a thousand at a time.
    """
    current = projection.initial() if state is None else state
    apply_many = getattr(projection, "apply_many", None)
    if apply_many is None:
        for record in records:
            current = projection.apply(current, record)
        return current
    if isinstance(records, list):
        return apply_many(current, records)  # type: ignore[no-any-return]
    iterator = iter(records)
    while chunk := list(islice(iterator, 1024)):
        current = apply_many(current, chunk)
    return current


def replay(projection: Projection[S], journal: SessionJournal, *, at: int | None = None) -> S:
    """The projection of `journal` from scratch, or as it was at seq `at` (time travel by folding)."""
    limit = None if at is None else max(at, 0)
    return fold(projection, journal.read(after=0, limit=limit))


def head_of(state: ProjectionState) -> Head:
    return Head(state.seq, state.digest)


class LiveProjection(Generic[S]):
    """Keeps a projection current with a journal by applying only the records after its head."""

    def __init__(self, projection: Projection[S], journal: SessionJournal, state: S | None = None) -> None:
        self.projection = projection
        self.journal = journal
        self.state = projection.initial() if state is None else state
        self.refresh()

    def refresh(self) -> int:
        """Apply records committed since the last refresh; returns how many."""
        count = 0
        for record in self.journal.read(after=self.state.seq):
            self.state = self.projection.apply(self.state, record)
            count += 1
        return count
