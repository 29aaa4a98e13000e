"""Issue 40: the reflection state machine is public and pure (values in, values out)."""

from __future__ import annotations

import pytest

from waybook.journal._roles.reflection import ReflectionState
from waybook.memory.tools import (
    SessionActivity,
    complete_transition,
    evaluate_transitions,
    reserve_transition,
    start_transition,
)
from waybook.model._errors import InvalidRecordError


def test_a_run_goes_from_evaluated_to_reserved_to_started_to_completed_and_moves_the_cursor() -> None:
    empty = ReflectionState()
    chat = [SessionActivity("chat", steps=(3, 5))]
    assert evaluate_transitions(empty, chat, step_threshold=3) is None
    assert evaluate_transitions(empty, chat, step_threshold=2) == "step"
    assert (
        evaluate_transitions(empty, [SessionActivity("chat", compactions=(4,))], step_threshold=9)
        == "compaction"
    )
    pending = reserve_transition(empty, run="r1", trigger="step")
    assert evaluate_transitions(pending, chat, step_threshold=2) is None  # a step does not replace a step
    assert evaluate_transitions(pending, chat, step_threshold=2, manual=True) == "manual"
    active = start_transition(pending, windows=(("chat", 0, 5),))
    assert evaluate_transitions(active, chat, step_threshold=1) is None  # the active run reads them
    done = complete_transition(active, run="r1", outcome="merged")
    assert (done.active, dict(done.cursors), done.last) == (None, {"chat": 5}, ("r1", "merged"))
    assert empty == ReflectionState()  # nothing was changed in place


def test_an_illegal_transition_is_refused_as_the_journal_refuses_it() -> None:
    with pytest.raises(InvalidRecordError):
        complete_transition(ReflectionState(), run="r1", outcome="merged")
    pending = reserve_transition(ReflectionState(), run="r1", trigger="manual")
    with pytest.raises(InvalidRecordError):
        start_transition(pending, windows=(("chat", 3, 5),))  # not at the cursor
