"""Pydantic AI on a waybook store: a chat with a scripted model (no network, no API key).

The conversation survives a restart, an undone run stays in the journal on its own branch, and a run that
read a history another writer has since extended is refused instead of interleaving with it.
Run: python examples/pydantic_ai_history.py
"""

import tempfile

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from waybook import verify
from waybook.integrations.errors import StaleHistoryError
from waybook.integrations.pydantic_ai import WaybookMessageHistory
from waybook.stores import open_store

REPLIES = {"I like tea": "Noted: tea.", "What do I like?": "You like tea.", "Or coffee?": "Tea, you said."}


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers the latest user prompt from the script."""
    prompt = messages[-1].parts[-1].content
    return ModelResponse(parts=[TextPart(content=REPLIES[prompt])])


def main() -> None:
    url = f"file:{tempfile.mkdtemp(prefix='waybook-pydantic-ai-')}"
    agent = Agent(FunctionModel(scripted))

    history = WaybookMessageHistory(open_store(url), "chat-1")
    print("assistant:", history.run_sync(agent, "I like tea").output)

    restarted = WaybookMessageHistory(open_store(url), "chat-1")  # a new process on the same store
    print("after restart:", restarted.run_sync(agent, "What do I like?").output)
    undone = restarted.undo_run()
    print(f"undone: {len(undone)} messages; the history has {len(restarted.messages())}")
    print("assistant:", restarted.run_sync(agent, "Or coffee?").output)

    stale = history.messages()  # this writer reads...
    restarted.run_sync(agent, "What do I like?")  # ...another appends...
    result = agent.run_sync("Or coffee?", message_history=stale)
    try:
        history.append(result.new_messages())  # ...and this one's run is refused
    except StaleHistoryError:
        print("stale writer refused")

    store = open_store(url)
    with store.open(restarted.journal_id) as journal:
        print("chain ok", verify(journal).ok)


if __name__ == "__main__":
    main()
