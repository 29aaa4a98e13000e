"""Microsoft Agent Framework on a waybook store: an agent with a scripted chat client (no network).

The session's history survives a restart (a new agent and provider on the same store), clearing it keeps
every earlier message in the journal, and a save from a run that loaded a history another writer has
since extended is refused.
Run: python examples/agent_framework_history.py
"""

import asyncio
import tempfile
from collections.abc import Sequence
from typing import Any

from agent_framework import Agent, BaseChatClient, ChatResponse, Message

from waybook import verify
from waybook.integrations.agent_framework import WaybookHistoryProvider
from waybook.integrations.errors import StaleHistoryError
from waybook.stores import open_store

REPLIES = {"I like tea": "Noted: tea.", "What do I like?": "You like tea."}


class ScriptedClient(BaseChatClient):  # type: ignore[type-arg]
    """Answers the latest user message from the script."""

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> Any:
        async def reply() -> ChatResponse:
            return ChatResponse(messages=[Message(role="assistant", contents=[REPLIES[messages[-1].text]])])

        return reply()


async def main() -> None:
    url = f"file:{tempfile.mkdtemp(prefix='waybook-agent-framework-')}"
    agent = Agent(client=ScriptedClient(), context_providers=[WaybookHistoryProvider(open_store(url))])
    session = agent.create_session(session_id="ada")
    print("assistant:", (await agent.run("I like tea", session=session)).text)

    provider = WaybookHistoryProvider(open_store(url))  # a new process on the same store
    restarted = Agent(client=ScriptedClient(), context_providers=[provider])
    print(
        "after restart:",
        (await restarted.run("What do I like?", session=restarted.create_session(session_id="ada"))).text,
    )

    loaded = await provider.get_messages("ada")
    await WaybookHistoryProvider(open_store(url)).save_messages(
        "ada", [Message(role="user", contents=["hi"])]
    )
    try:
        await provider.save_messages("ada", [*loaded, Message(role="user", contents=["and coffee"])])
    except StaleHistoryError:
        print("stale writer refused")

    print("read again:", len(await provider.get_messages("ada")), "messages")
    await provider.clear("ada")
    print("after clear:", len(await provider.get_messages("ada")), "messages")
    with open_store(url).open(provider.journal_id("ada")) as journal:
        print("the journal still holds them:", any("tea" in str(record.body) for record in journal.read()))
        print("chain ok", verify(journal).ok)


if __name__ == "__main__":
    asyncio.run(main())
