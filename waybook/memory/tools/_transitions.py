"""The reflection state machine as pure functions over values (no journal, no clock, no I/O).

- `evaluate_transitions(state, activity, step_threshold=...)`: the trigger the machine reserves next
  (manual > compaction > step), or None: `activity` is what each session journal holds past a seq.
- `reserve_transition(state, run=..., trigger=...)`: the state with that run pending.
- `start_transition(state, windows=...)`: the pending run active, reading those windows.
- `complete_transition(state, run=..., outcome=...)`: the active run finished; merged and no_changes
  advance the cursors.

Each transition is exactly the rule the memory journal enforces (`waybook.journal._roles.reflection`):
an illegal one raises InvalidRecordError and returns nothing. `ReflectionScheduler` decides with these
and records each transition in the memory journal.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from waybook.journal._roles.reflection import PRIORITY, ReflectionState, reflect
from waybook.model import ReflectionFinished, ReflectionReserved, ReflectionStarted


@attrs.frozen
class SessionActivity:
    """What one session journal (by header id) holds: the seqs of its assistant steps and compactions."""

    journal: str
    steps: tuple[int, ...] = ()
    compactions: tuple[int, ...] = ()


def evaluate_transitions(
    state: ReflectionState, activity: Iterable[SessionActivity], *, step_threshold: int, manual: bool = False
) -> str | None:
    """The trigger to reserve now, or None: past each session's cursor (and past what the active run
    reads), a compaction is `compaction`, `step_threshold` assistant steps together are `step`; `manual`
    outranks both. A pending reservation is replaced only by a higher-priority trigger."""
    read_through = dict(state.cursors)
    if state.active is not None:
        read_through.update((name, through) for name, _, through in state.active.windows)
    steps, compacted = 0, False
    for session in activity:
        after = read_through.get(session.journal, 0)
        steps += sum(1 for seq in session.steps if seq > after)
        compacted = compacted or any(seq > after for seq in session.compactions)
    trigger = (
        "manual" if manual else "compaction" if compacted else "step" if steps >= step_threshold else None
    )
    if trigger is None or (
        state.pending is not None and PRIORITY[trigger] <= PRIORITY[state.pending.trigger]
    ):
        return None
    return trigger


def reserve_transition(
    state: ReflectionState, *, run: str, trigger: str, reason: str = ""
) -> ReflectionState:
    return reflect(state, run, ReflectionReserved(run=run, trigger=trigger, reason=reason))


def start_transition(state: ReflectionState, *, windows: tuple[tuple[str, int, int], ...]) -> ReflectionState:
    run = state.pending.run if state.pending is not None else ""
    return reflect(state, run, ReflectionStarted(run=run, windows=windows))


def complete_transition(
    state: ReflectionState, *, run: str, outcome: str, detail: str = ""
) -> ReflectionState:
    return reflect(state, run, ReflectionFinished(run=run, outcome=outcome, detail=detail))
