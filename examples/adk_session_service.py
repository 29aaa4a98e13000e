"""Google ADK on a waybook store: a Runner with a scripted model (no network, no API key).

The agent remembers a preference in user state, the session survives a restart of the service, and a
stale session object is refused instead of silently overwriting another writer's event.
Run: python examples/adk_session_service.py
"""

import asyncio
import tempfile
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types

from waybook import verify
from waybook.integrations.adk import StaleSessionError, WaybookSessionService
from waybook.stores import open_store


class ScriptedModel(BaseLlm):
    """Answers every request with the next scripted reply."""

    replies: list[str]

    async def generate_content_async(self, llm_request, stream=False) -> AsyncGenerator[LlmResponse, None]:  # type: ignore[no-untyped-def]
        text = self.replies.pop(0)
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=1, candidates_token_count=1)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]), usage_metadata=usage
        )


def user_says(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def main() -> None:
    url = f"file:{tempfile.mkdtemp(prefix='waybook-adk-')}"
    service = WaybookSessionService(open_store(url))
    agent = LlmAgent(
        name="helper", model=ScriptedModel(model="scripted", replies=["Noted: tea.", "You like tea."])
    )
    runner = Runner(app_name="demo", agent=agent, session_service=service)

    session = await service.create_session(app_name="demo", user_id="ada", state={"user:drink": "tea"})
    async for event in runner.run_async(
        user_id="ada", session_id=session.id, new_message=user_says("I like tea")
    ):
        print(f"{event.author}: {event.content.parts[0].text}")

    restarted = WaybookSessionService(open_store(url))  # a new process on the same store
    again = await restarted.get_session(app_name="demo", user_id="ada", session_id=session.id)
    print(f"after restart: {len(again.events)} events, user:drink = {again.state['user:drink']}")

    stale = await restarted.get_session(app_name="demo", user_id="ada", session_id=session.id)
    runner = Runner(app_name="demo", agent=agent, session_service=restarted)
    async for event in runner.run_async(
        user_id="ada", session_id=session.id, new_message=user_says("What do I like?")
    ):
        print(f"{event.author}: {event.content.parts[0].text}")
    try:
        await restarted.append_event(stale, again.events[0].model_copy(update={"id": "late-writer"}))
    except StaleSessionError as refused:
        print(f"stale writer refused: {str(refused)[:60]}...")

    store = open_store(url)
    for info in store.list():
        report = verify(store.open(info.journal_id))
        print(f"{info.metadata['runtime']:16} {info.journal_id[:20]:20} chain ok {report.ok}")


if __name__ == "__main__":
    asyncio.run(main())
