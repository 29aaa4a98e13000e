"""The documented path of `waybook.integrations.anthropic_memory`, kept as a re-export (docs/architecture.md)."""

from waybook.integrations.anthropic_memory import *  # noqa: F403
