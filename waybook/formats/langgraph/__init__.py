"""LangGraph checkpoint threads (a `SqliteSaver` database), imported as waybook records."""

from waybook.formats.langgraph._database import (
    LangGraphDatabaseError,
)
from waybook.formats.langgraph._import import (
    LangGraphImport,
    import_langgraph,
)

__all__ = [
    "LangGraphDatabaseError",
    "LangGraphImport",
    "import_langgraph",
]
