"""waybook: an AI agent's sessions and memory as one append-only, event-sourced journal.

Start with `Session.create(InMemoryJournal())` or a `JsonlJournal` path; see README.md.
"""

from waybook._async_session import AsyncSession
from waybook._resume import Resumed, resume
from waybook._session import Session, ToolOutcome, new_id, utc_now
from waybook._version import __version__
from waybook.journal import InMemoryJournal, JsonlJournal, SessionJournal, verify
from waybook.model import GENESIS, AppendResult, Head, JournalError, Record, StaleWriterError

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
