"""The OpenAI Agents SDK on waybook: `WaybookSession(session_id, store)` (docs/openai-agents.md).

Importing this module needs the SDK (`pip install 'waybook[openai-agents]'`; without it, MissingExtraError).
"""

from waybook.integrations._extras import needs_extra

with needs_extra(
    "waybook.integrations.openai_agents",
    runtime="the OpenAI Agents SDK",
    extra="openai-agents",
    modules=("agents",),
):
    import agents.memory.session_settings  # noqa: F401 - what WaybookSession needs when it is made

from waybook.integrations.openai_agents._session import WaybookSession

__all__ = ["WaybookSession"]
