"""OpenCode sessions (its JSON storage folder, or its SQLite database) imported to waybook records."""

from waybook.formats.opencode._import import OpenCodeImport, import_opencode
from waybook.formats.opencode._storage import (
    NotAnOpenCodeStorageError,
    OpenCodeStorageError,
    Stored,
    is_storage_folder,
    read_opencode,
)

__all__ = [
    "NotAnOpenCodeStorageError",
    "OpenCodeImport",
    "OpenCodeStorageError",
    "Stored",
    "import_opencode",
    "is_storage_folder",
    "read_opencode",
]
