"""The reflection scheduler's state and its transition rules: a pure fold of a memory journal's records.

The memory journal enforces these rules on append and replay (memory_rules.py), and the scheduler
(`waybook.memory.tools.reflection`) folds the same records, so the recorded transitions are always legal:

- a reservation names a trigger (`manual` > `compaction` > `step`); there is at most one pending run, and
  a new reservation replaces it only with a higher-priority trigger;
- `started` turns the pending run active (at most one active run); its windows start at the cursors,
  name each session journal once, at most `MAX_CONVERSATIONS` of them;
- `finished` ends the active run with `merged`, `no_changes` or `failed`; only the first two advance the
  cursors to the ends of the run's windows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from waybook.model import InvalidRecordError, ReflectionFinished, ReflectionReserved, ReflectionStarted

PRIORITY: Final = {"manual": 3, "compaction": 2, "step": 1}
OUTCOMES: Final = ("merged", "no_changes", "failed")
MAX_CONVERSATIONS: Final = 32
MAX_READ_BYTES: Final = 4 * 1024 * 1024

ReflectionBody = ReflectionReserved | ReflectionStarted | ReflectionFinished


@attrs.frozen
class Pending:
    run: str
    trigger: str
    reason: str = ""


@attrs.frozen
class ReflectionRun:
    """An active run: what triggered it and the windows (session journal, after seq, through seq) it reads."""

    run: str
    trigger: str
    reason: str
    windows: tuple[tuple[str, int, int], ...]


@attrs.frozen
class ReflectionState:
    active: ReflectionRun | None = None
    pending: Pending | None = None
    cursors: Mapping[str, int] = attrs.field(factory=dict)
    """Per session journal (header id): the seq through which reflection has read (merged or no_changes)."""
    runs: int = 0
    """How many runs have finished."""
    last: tuple[str, str] | None = None
    """The last finished run and its outcome."""


def reflect(state: ReflectionState, rid: str, body: ReflectionBody, journal: str = "") -> ReflectionState:
    """The state after one transition record; InvalidRecordError (nothing changes) if it is not legal."""

    def refuse(message: str) -> InvalidRecordError:
        return InvalidRecordError(f"reflection record {rid!r}: {message}", journal=journal, record_id=rid)

    if isinstance(body, ReflectionReserved):
        if body.trigger not in PRIORITY:
            raise refuse(f"trigger {body.trigger!r} is not one of {', '.join(PRIORITY)}")
        if not body.run or (state.active and state.active.run == body.run):
            raise refuse("a reservation needs a new run id")
        if state.pending is not None and PRIORITY[body.trigger] <= PRIORITY[state.pending.trigger]:
            raise refuse(
                f"run {state.pending.run} is already pending ({state.pending.trigger}); only a "
                "higher-priority trigger replaces it"
            )
        return attrs.evolve(state, pending=Pending(body.run, body.trigger, body.reason))
    if isinstance(body, ReflectionStarted):
        if state.pending is None or state.pending.run != body.run:
            raise refuse(f"run {body.run!r} is not the pending run")
        if state.active is not None:
            raise refuse(f"run {state.active.run} is still active; at most one run is active")
        names = [name for name, _, _ in body.windows]
        if len(set(names)) != len(names) or len(names) > MAX_CONVERSATIONS:
            raise refuse(f"a run reads each session journal once, at most {MAX_CONVERSATIONS} of them")
        for name, after, through in body.windows:
            if type(after) is not int or type(through) is not int or not 0 <= after <= through:
                raise refuse(f"window of {name} must be 0 <= after <= through, not ({after}, {through})")
            if after != state.cursors.get(name, 0):
                raise refuse(
                    f"window of {name} starts at {after}, not at its cursor {state.cursors.get(name, 0)}"
                )
        pending = state.pending
        run = ReflectionRun(pending.run, pending.trigger, pending.reason, tuple(body.windows))
        return attrs.evolve(state, active=run, pending=None)
    if state.active is None or state.active.run != body.run:
        raise refuse(f"run {body.run!r} is not the active run")
    if body.outcome not in OUTCOMES:
        raise refuse(f"outcome {body.outcome!r} is not one of {', '.join(OUTCOMES)}")
    cursors = dict(state.cursors)
    if body.outcome != "failed":
        cursors.update((name, through) for name, _, through in state.active.windows)
    return attrs.evolve(
        state, active=None, cursors=cursors, runs=state.runs + 1, last=(body.run, body.outcome)
    )
