"""Memory: the agent-facing Memory port over working-memory journals, its projection and its index."""

from waybook.memory.authority import AsyncAuthority, Authority, create_async_authority, create_authority
from waybook.memory.commands import Command, Create, Delete, Insert, Rename, StrReplace, View
from waybook.memory.decide import DEFAULT_LIMITS, Limits
from waybook.memory.errors import AdoptionConflictError, ExplanationExpiredError, ProfileError, RequestError
from waybook.memory.nominations import NominatedRecord, Nomination
from waybook.memory.outcomes import (
    AdoptionReceipt,
    Explanation,
    PinReceipt,
    QueryResult,
    RememberReceipt,
    Route,
)
from waybook.memory.port import Memory, ScopeMismatchError
from waybook.memory.results import (
    CODES,
    Created,
    Deleted,
    DirectoryView,
    Edited,
    Entry,
    Failure,
    FileView,
    LineSpan,
    Receipt,
    Renamed,
    Result,
)
from waybook.memory.state import MemoryFile, MemoryProjection, MemoryState, Revision

__all__ = [
    "CODES",
    "AdoptionConflictError",
    "AdoptionReceipt",
    "AsyncAuthority",
    "Authority",
    "Explanation",
    "ExplanationExpiredError",
    "NominatedRecord",
    "Nomination",
    "PinReceipt",
    "ProfileError",
    "QueryResult",
    "RememberReceipt",
    "RequestError",
    "Route",
    "create_async_authority",
    "create_authority",
    "DEFAULT_LIMITS",
    "Command",
    "Create",
    "Created",
    "Delete",
    "Deleted",
    "DirectoryView",
    "Edited",
    "Entry",
    "Failure",
    "FileView",
    "Insert",
    "LineSpan",
    "Limits",
    "Memory",
    "MemoryFile",
    "MemoryProjection",
    "MemoryState",
    "Receipt",
    "Rename",
    "Renamed",
    "Result",
    "Revision",
    "ScopeMismatchError",
    "StrReplace",
    "View",
]
