"""waybook: an AI agent's sessions and memory as one append-only, event-sourced journal.

Start with `Session.create(InMemoryJournal())` or a `JsonlJournal` path; see README.md.
"""

from waybook._version import __version__
from waybook.async_session import AsyncSession
from waybook.journal import (
    GENESIS,
    AppendResult,
    Head,
    InMemoryJournal,
    JournalError,
    JsonlJournal,
    Record,
    SessionJournal,
    StaleWriterError,
    verify,
)
from waybook.resume import Resumed, resume
from waybook.session import Session, ToolOutcome, new_id, utc_now

__all__ = [
    "GENESIS",
    "AppendResult",
    "AsyncSession",
    "Head",
    "InMemoryJournal",
    "JournalError",
    "JsonlJournal",
    "Record",
    "Resumed",
    "Session",
    "SessionJournal",
    "StaleWriterError",
    "ToolOutcome",
    "__version__",
    "new_id",
    "resume",
    "utc_now",
    "verify",
]
