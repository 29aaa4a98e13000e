"""The documented path of `waybook.integrations.anthropic_memory`, kept (docs/architecture.md)."""

from waybook.integrations.anthropic_memory import *  # noqa: F403
from waybook.integrations.anthropic_memory import __all__ as __all__
