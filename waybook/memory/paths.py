"""Memory paths (the rules live in the journal layer, which enforces them on every memory journal)."""

from waybook.journal.memory_paths import (
    EXTENSIONS,
    MAX_PATH_BYTES,
    ROOT,
    PathError,
    ancestors,
    check_extension,
    is_under,
    normalize,
    parent,
)

__all__ = [
    "EXTENSIONS",
    "MAX_PATH_BYTES",
    "ROOT",
    "PathError",
    "ancestors",
    "check_extension",
    "is_under",
    "normalize",
    "parent",
]
