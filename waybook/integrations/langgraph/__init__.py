"""LangGraph on waybook: `WaybookSaver(store)`, a checkpointer whose threads are journals (docs/langgraph.md).

Importing this module imports LangGraph (`pip install 'waybook[langgraph]'`; without it, MissingExtraError).
"""

from waybook.integrations._extras import needs_extra

with needs_extra(
    "waybook.integrations.langgraph",
    runtime="LangGraph",
    extra="langgraph",
    modules=("langgraph", "langchain_core"),
):
    from waybook.integrations.langgraph._errors import (
        CheckpointValueError,
        ErasedCheckpointError,
        StaleThreadError,
        ThreadExistsError,
        UnknownPruneStrategyError,
        UnmaskedSecretError,
    )
    from waybook.integrations.langgraph._saver import WaybookSaver

__all__ = [
    "CheckpointValueError",
    "ErasedCheckpointError",
    "StaleThreadError",
    "ThreadExistsError",
    "UnknownPruneStrategyError",
    "UnmaskedSecretError",
    "WaybookSaver",
]
