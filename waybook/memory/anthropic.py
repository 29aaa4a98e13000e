"""The documented path of `waybook.integrations.anthropic_memory`, kept (docs/architecture.md)."""

from waybook.integrations.anthropic_memory import *  # noqa: F403
