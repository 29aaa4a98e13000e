"""LangGraph checkpoint threads (a `SqliteSaver` database), imported as waybook records."""

from waybook.formats.langgraph._database import (
    LangGraphDatabaseError,
    read_thread,
)
from waybook.formats.langgraph._import import (
    LangGraphImport,
    import_langgraph,
)

__all__ = [
    "import_langgraph",
    "LangGraphDatabaseError",
    "LangGraphImport",
    "read_thread",
]
