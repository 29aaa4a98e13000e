"""Claude Agent SDK transcripts in a waybook store, read back with the SDK's own helpers.

A real agent passes `ClaudeAgentOptions(session_store=store)` and the SDK mirrors every transcript line
Claude Code writes. Here (no model, no network) we append the lines of a scripted two-turn conversation
as the mirror would, retry one batch as the mirror does after a timeout, then list, read and fork the
session with the SDK's helpers, and verify every journal's digest chain.
Run: python examples/claude_agent_sdk_store.py
"""

import asyncio
import tempfile
import uuid

from claude_agent_sdk import (
    ClaudeAgentOptions,
    fork_session_via_store,
    get_session_messages_from_store,
    list_sessions_from_store,
    project_key_for_directory,
)

from waybook import verify
from waybook.integrations.claude_agent_sdk import WaybookSessionStore
from waybook.stores import open_store


def line(kind: str, text: str, parent: str | None, session_id: str, second: int) -> dict[str, object]:
    return {
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "parentUuid": parent,
        "sessionId": session_id,
        "timestamp": f"2026-01-01T00:00:0{second}.000Z",
        "message": {"role": kind, "content": [{"type": "text", "text": text}]},
    }


async def main() -> None:
    folder = tempfile.mkdtemp(prefix="waybook-claude-")
    store = WaybookSessionStore(open_store(f"file:{folder}/store"))
    ClaudeAgentOptions(cwd=folder, session_store=store)  # what an agent hands the SDK

    session_id = str(uuid.uuid4())
    key = {"project_key": project_key_for_directory(folder), "session_id": session_id}
    lines, parent = [], None
    for second, (kind, text) in enumerate(
        [
            ("user", "Plan a picnic"),
            ("assistant", "Bread, cheese, tea."),
            ("user", "No tea"),
            ("assistant", "Lemonade."),
        ]
    ):
        lines.append(line(kind, text, parent, session_id, second))
        parent = lines[-1]["uuid"]
    await store.append(key, lines[:2])
    await store.append(key, lines[:2])  # a retried batch: its entries are already stored, nothing is added
    await store.append(key, lines[2:])

    for info in await list_sessions_from_store(store, directory=folder):
        print(f"session {info.session_id[:8]}: {info.summary!r}")
    for message in await get_session_messages_from_store(store, session_id, directory=folder):
        print(f"  {message.type:9} {message.message['content'][0]['text']}")
    fork = await fork_session_via_store(
        store, session_id, directory=folder, up_to_message_id=lines[1]["uuid"]
    )
    print(f"forked at the first reply into {fork.session_id[:8]}")

    journals = open_store(f"file:{folder}/store")
    for info in journals.list():
        report = verify(journals.open(info.journal_id))
        print(
            f"journal {info.journal_id[:16]} (session {info.metadata['session_id'][:8]}) chain ok {report.ok}"
        )


if __name__ == "__main__":
    asyncio.run(main())
