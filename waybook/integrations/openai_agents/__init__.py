"""The OpenAI Agents SDK on waybook: `WaybookSession(session_id, store)` (docs/openai-agents.md).

Importing this module needs the SDK only when a session is used (`pip install 'waybook[openai-agents]'`).
"""

from waybook.integrations.openai_agents._session import WaybookSession

__all__ = ["WaybookSession"]
