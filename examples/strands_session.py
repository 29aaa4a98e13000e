"""Strands Agents on a waybook store: an agent with a scripted model (no network, no API key).

The conversation survives a restart (a new agent and session manager on the same store), a guardrail's
redaction replaces the message the agent sees while the journal keeps the original on its own branch,
and a second writer that is behind cannot overwrite a message another writer created.
Run: python examples/strands_session.py
"""

import tempfile
from collections.abc import AsyncGenerator
from typing import Any

from strands import Agent
from strands.models import Model
from strands.session.repository_session_manager import RepositorySessionManager
from strands.types.exceptions import SessionException

from waybook import verify
from waybook.integrations.strands import WaybookSessionRepository
from waybook.stores import open_store


class ScriptedModel(Model):
    """Streams the next scripted reply; a reply of None is a guardrail intervention that redacts."""

    def __init__(self, *replies: str | None) -> None:
        self.replies = list(replies)

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        reply = self.replies.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if reply is None:
            yield {"redactContent": {"redactUserContentMessage": "[redacted]"}}
            reply, stop = "I can't keep card numbers.", "guardrail_intervened"
        else:
            stop = "end_turn"
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": stop}}


def agent(url: str, *replies: str | None) -> Agent:
    manager = RepositorySessionManager(
        session_id="ada", session_repository=WaybookSessionRepository(open_store(url))
    )
    return Agent(
        model=ScriptedModel(*replies), session_manager=manager, agent_id="helper", callback_handler=None
    )


def main() -> None:
    url = f"file:{tempfile.mkdtemp(prefix='waybook-strands-')}"
    print("assistant:", str(agent(url, "Noted: tea.")("I like tea")).strip())
    restarted = agent(url, "You like tea.", None)  # a new process on the same store
    answer = str(restarted("What do I like?")).strip()
    print("after restart:", answer, f"({len(restarted.messages)} messages)")
    restarted("my card is 4111")
    print("the agent sees:", restarted.messages[-2]["content"][0]["text"])

    repository = WaybookSessionRepository(open_store(url))
    behind = repository.read_message("ada", "helper", 0)
    try:
        repository.create_message("ada", "helper", behind)  # a writer that missed the others' messages
    except SessionException as refused:
        print("stale writer refused:", refused)

    with open_store(url).open(repository.journal_ids("ada", "helper")) as journal:
        print("the journal still holds the original:", any("4111" in str(r.body) for r in journal.read()))
        print("chain ok", verify(journal).ok)


if __name__ == "__main__":
    main()
