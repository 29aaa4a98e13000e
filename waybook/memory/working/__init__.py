"""Working memory: the agent-facing Memory port over a working-memory journal, its commands, results
and the memory projection."""

from waybook.memory.working._commands import (
    ApplyPatch,
    Command,
    Create,
    Delete,
    Insert,
    Rename,
    StrReplace,
    UpdateDescription,
    View,
)
from waybook.memory.working._decide import (
    DEFAULT_LIMITS,
    Limits,
)
from waybook.memory.working._port import (
    Memory,
    ScopeMismatchError,
)
from waybook.memory.working._results import (
    CODES,
    Created,
    Deleted,
    DirectoryView,
    Edited,
    Entry,
    Failure,
    FileView,
    LineSpan,
    Patched,
    Receipt,
    Renamed,
    Result,
)
from waybook.memory.working._state import (
    MemoryFile,
    MemoryProjection,
    MemoryState,
    Revision,
)

__all__ = [
    "ApplyPatch",
    "CODES",
    "Command",
    "Create",
    "Created",
    "DEFAULT_LIMITS",
    "Delete",
    "Deleted",
    "DirectoryView",
    "Edited",
    "Entry",
    "Failure",
    "FileView",
    "Insert",
    "Limits",
    "LineSpan",
    "Memory",
    "MemoryFile",
    "MemoryProjection",
    "MemoryState",
    "Patched",
    "Receipt",
    "Rename",
    "Renamed",
    "Result",
    "Revision",
    "ScopeMismatchError",
    "StrReplace",
    "UpdateDescription",
    "View",
]
