"""The reflection scheduler: when to run a reflection over the session journals, as a projection.

Its state (`.active`, `.pending`, `.cursors`) is a pure fold of the memory journal's transition records
(`waybook.reflection.reserved/1`, `started/1`, `finished/1`; rules in `waybook.journal._roles.reflection`,
which the memory journal enforces on every append). The scheduler only decides which record to append:

- `request(reason=...)` reserves a manual run; `poll()` derives compaction and step triggers from the
  session journals' records past the cursors (and past the active run's windows) and reserves the
  highest; a reservation replaces a pending one only with a higher priority (manual > compaction > step);
- `start()` turns the pending run active, fixing the windows it may read: session journals with records
  past their cursor, in journal-id order, at most `max_conversations` of them and `max_read_bytes` of
  records (canonical bytes; at least one record, so a run always makes progress);
- `finish(run, outcome)` records `merged`, `no_changes` or `failed`; only the first two advance cursors.

`scheduler_state(memory_journal, session_journals, at=None)` replays the same state at any seq.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

import attrs

from waybook._session import new_id, utc_now
from waybook.codecs import ENCODER
from waybook.journal import SessionJournal
from waybook.journal._roles.memory import MEMORY_ROLES
from waybook.journal._roles.reflection import (
    MAX_CONVERSATIONS,
    MAX_READ_BYTES,
    OUTCOMES,
    PRIORITY,
    Pending,
    ReflectionRun,
    ReflectionState,
    reflect,
)
from waybook.memory._errors import ProfileError, RequestError
from waybook.model import (
    GENESIS_DIGEST,
    AssistantMessage,
    Compaction,
    Head,
    Header,
    NewRecord,
    Record,
    ReflectionFinished,
    ReflectionReserved,
    ReflectionStarted,
    StaleWriterError,
)
from waybook.projections import LiveProjection, check_next, replay

__all__ = [
    "MAX_CONVERSATIONS",
    "MAX_READ_BYTES",
    "Pending",
    "ReflectionRun",
    "ReflectionScheduler",
    "ReflectionState",
    "scheduler_state",
]

ATTEMPTS: Final = 8
"""How many races a transition may lose to other reflection transitions before it gives up."""
REBASES: Final = 256
"""How many races it may lose to note writes, which never change the scheduler's state: each is decided
again on the new head (the bookkeeping never competes with memory writes)."""


@attrs.define
class _Folded:
    seq: int = 0
    digest: str = GENESIS_DIGEST
    role: str | None = None
    reflection: ReflectionState = attrs.Factory(ReflectionState)


class _ReflectionProjection:
    tag: Final = "waybook.projection.reflection/1"

    def initial(self) -> _Folded:
        return _Folded()

    def apply(self, state: _Folded, record: Record) -> _Folded:
        check_next(state, record)
        body = record.body
        if isinstance(body, Header):
            state.role = body.role
        elif isinstance(body, ReflectionReserved | ReflectionStarted | ReflectionFinished):
            state.reflection = reflect(state.reflection, record.id, body)
        state.seq, state.digest = record.seq, record.digest
        return state


def scheduler_state(
    memory_journal: SessionJournal, session_journals: Sequence[SessionJournal], at: int | None = None
) -> ReflectionState:
    """The scheduler's state as of seq `at` of the memory journal (default: its head), by replay."""
    del session_journals  # the state is the memory journal's fold; the sessions only feed new triggers
    return replay(_ReflectionProjection(), memory_journal, at=at).reflection


class ReflectionScheduler:
    """Decides and records reflection transitions for one memory journal over some session journals."""

    def __init__(
        self,
        memory_journal: SessionJournal,
        session_journals: Sequence[SessionJournal],
        *,
        step_threshold: int,
        max_conversations: int = MAX_CONVERSATIONS,
        max_read_bytes: int = MAX_READ_BYTES,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
    ) -> None:
        if type(step_threshold) is not int or step_threshold < 1:
            msg = f"step_threshold must be a whole number of at least 1, not {step_threshold!r}"
            raise RequestError(msg)
        if not 1 <= max_conversations <= MAX_CONVERSATIONS or max_read_bytes < 1:
            msg = f"max_conversations must be 1..{MAX_CONVERSATIONS} and max_read_bytes positive"
            raise RequestError(msg)
        self._journal = memory_journal
        self._sessions = tuple(session_journals)
        self._threshold = step_threshold
        self._max_conversations = max_conversations
        self._max_bytes = max_read_bytes
        self._clock = clock
        self._ids = ids
        self._live = LiveProjection(_ReflectionProjection(), memory_journal)
        self._live.refresh()
        if self._live.state.role not in MEMORY_ROLES:
            msg = (
                f"{memory_journal.name} is not a memory journal (role {self._live.state.role!r}); the "
                "scheduler records its transitions in a working or canonical memory journal"
            )
            raise ProfileError(msg)

    def state(self) -> ReflectionState:
        self._live.refresh()
        return self._live.state.reflection

    def request(self, *, reason: str) -> Pending:
        """A manual trigger: reserve a run (or keep the pending manual one)."""
        pending = self._reserve(lambda state: "manual", reason)
        assert pending is not None  # a manual trigger always leaves a pending run
        return pending

    def poll(self) -> Pending | None:
        """Derive compaction and step triggers from the session journals; reserve the highest."""
        return self._reserve(self._trigger, "")

    def start(self) -> ReflectionRun | None:
        """The pending run, now active with its read windows; None if none is pending or one is active."""
        for _ in self._tries():
            state = self.state()
            if state.pending is None or state.active is not None:
                return None
            body = ReflectionStarted(run=state.pending.run, windows=self._windows(state))
            if self._append(body):
                return self.state().active
        raise self._lost()

    def finish(self, run: ReflectionRun, outcome: str, *, detail: str = "") -> ReflectionState:
        """End the active `run` with `merged`, `no_changes` or `failed`."""
        if outcome not in OUTCOMES:
            msg = f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}"
            raise RequestError(msg)
        for _ in self._tries():
            state = self.state()
            if state.active is None or state.active.run != run.run:
                msg = f"run {run.run} is not active (it finished already, or never started); nothing recorded"
                raise RequestError(msg)
            if self._append(ReflectionFinished(run=run.run, outcome=outcome, detail=detail)):
                return self.state()
        raise self._lost()

    # --- internals ----------------------------------------------------------------------------

    def _reserve(self, trigger_of: Callable[[ReflectionState], str | None], reason: str) -> Pending | None:
        for _ in self._tries():
            state = self.state()
            trigger = trigger_of(state)
            pending = state.pending
            if trigger is None or (pending is not None and PRIORITY[trigger] <= PRIORITY[pending.trigger]):
                return pending
            if self._append(ReflectionReserved(run=f"reflect_{self._ids()}", trigger=trigger, reason=reason)):
                return self.state().pending
        raise self._lost()

    def _trigger(self, state: ReflectionState) -> str | None:
        read_through = dict(state.cursors)
        if state.active is not None:
            read_through.update((name, through) for name, _, through in state.active.windows)
        steps, compacted = 0, False
        for name, journal in self._named_sessions():
            for record in journal.read(after=read_through.get(name, 0)):
                if isinstance(record.body, Compaction):
                    compacted = True
                elif isinstance(record.body, AssistantMessage):
                    steps += 1
        if compacted:
            return "compaction"
        return "step" if steps >= self._threshold else None

    def _windows(self, state: ReflectionState) -> tuple[tuple[str, int, int], ...]:
        windows: list[tuple[str, int, int]] = []
        budget = self._max_bytes
        for name, journal in sorted(self._named_sessions()):
            if len(windows) >= self._max_conversations or budget <= 0:
                break
            after = state.cursors.get(name, 0)
            through = after
            for record in journal.read(after=after):
                size = len(ENCODER.encode(record))
                if size > budget and (windows or through > after):
                    budget = 0
                    break
                budget -= size
                through = record.seq
            if through > after:
                windows.append((name, after, through))
        return tuple(windows)

    def _named_sessions(self) -> list[tuple[str, SessionJournal]]:
        named = []
        for journal in self._sessions:
            first = next(iter(journal.read(limit=1)), None)
            if first is not None and isinstance(first.body, Header):
                named.append((first.body.journal, journal))
        return named

    def _tries(self) -> Iterator[int]:
        """Attempts at one transition: a race lost to another reflection transition counts against
        ATTEMPTS; one lost to note writes only (the scheduler's state unchanged) is a rebase."""
        lost = 0
        for attempt in range(ATTEMPTS + REBASES):
            before = self._live.state.reflection
            yield attempt
            if self.state() != before:
                lost += 1
                if lost == ATTEMPTS:
                    return

    def _append(self, body: ReflectionReserved | ReflectionStarted | ReflectionFinished) -> bool:
        folded = self._live.state
        record = NewRecord(id=self._ids(), at=self._clock(), body=body)
        try:
            self._journal.append([record], expected=Head(folded.seq, folded.digest))
        except StaleWriterError:
            return False
        return True

    def _lost(self) -> RequestError:
        return RequestError(
            f"{self._journal.name}: lost the race to other writers {ATTEMPTS} times; try again"
        )
