"""Memory: the agent-facing Memory port over working-memory journals, its projection and its index."""

from waybook.memory.commands import Command, Create, Delete, Insert, Rename, StrReplace, View
from waybook.memory.decide import DEFAULT_LIMITS, Limits
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
