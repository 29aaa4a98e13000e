"""Every error a caller can cause is in waybook's one hierarchy (issue 26: "Errors in one hierarchy")."""

from __future__ import annotations

import pytest

from waybook import InMemoryJournal, JournalError, Session
from waybook.memory import Memory, ScopeMismatchError


def test_a_memory_port_on_another_scopes_journal_is_a_journal_error_and_still_a_value_error() -> None:
    journal = InMemoryJournal("m")
    Memory(journal, scope="a")
    with pytest.raises(ScopeMismatchError) as refused:
        Memory(journal, scope="b")
    assert isinstance(refused.value, JournalError)
    assert isinstance(refused.value, ValueError)


def test_a_session_on_something_that_is_not_a_journal_is_refused_typed() -> None:
    with pytest.raises(JournalError):
        Session("session.jsonl")  # type: ignore[arg-type]


def test_verify_of_something_that_is_not_a_journal_is_refused_typed() -> None:
    from waybook import verify
    from waybook.model import InvalidArgumentError

    for not_a_journal in ("session.jsonl", None, 3, object()):
        with pytest.raises(InvalidArgumentError, match="verify takes a journal"):
            verify(not_a_journal)  # type: ignore[arg-type]
