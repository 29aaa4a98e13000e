"""OpenAI Agents SDK session databases, imported as waybook records."""

from waybook.formats.openai_agents._database import read_session
from waybook.formats.openai_agents._import import (
    OpenAIAgentsImport,
    import_openai_agents,
)

__all__ = [
    "import_openai_agents",
    "OpenAIAgentsImport",
    "read_session",
]
