"""LangGraph on waybook: `WaybookSaver(store)`, a checkpointer whose threads are journals (docs/langgraph.md).

Importing this module imports LangGraph (`pip install 'waybook[langgraph]'`).
"""

from waybook.integrations.langgraph._saver import (
    StaleThreadError,
    ThreadExistsError,
    UnknownPruneStrategyError,
    WaybookSaver,
)

__all__ = ["StaleThreadError", "ThreadExistsError", "UnknownPruneStrategyError", "WaybookSaver"]
