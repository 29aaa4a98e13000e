"""The OpenAI Agents SDK on waybook: an agent whose session resumes after a restart, rewinds a turn and
takes another path (a fork), then is audited with `waybook tree` and exported as training data with
`waybook export`. The model is the SDK's ScriptedModel: no network, no API key.

Run: python examples/openai_agents_chat.py [STORE_DIR]     (needs `pip install 'waybook[openai-agents]'`)
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile

from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message

from waybook.integrations.openai_agents import WaybookSession
from waybook.stores import open_store

set_tracing_disabled(True)  # nothing leaves the machine


def agent(*replies: str) -> Agent:
    return Agent(
        name="planner",
        instructions="Plan trips.",
        model=ScriptedModel([[assistant_message(r)] for r in replies]),
    )


async def main(directory: str) -> None:
    # First process: two turns, then it "exits".
    with open_store(f"file:{directory}/store") as store:
        session = WaybookSession("trip-planning", store)
        planner = agent("Lisbon is lovely in May.", "Four days is enough.")
        await Runner.run(planner, "Where should I go in May?", session=session)
        await Runner.run(planner, "How long should I stay?", session=session)
        session.close()

    # A new process resumes the same session from the store.
    with open_store(f"file:{directory}/store") as store:
        session = WaybookSession("trip-planning", store)
        resumed = await Runner.run(
            agent("Trams and pastéis de nata."), "What should I try there?", session=session
        )
        print("after the restart:", resumed.final_output, f"({len(await session.get_items())} items)")

        # Rewind the last turn (pop_item moves the leaf back; nothing is erased) and ask something else.
        await session.pop_item()
        await session.pop_item()
        other = await Runner.run(
            agent("Rent a bike along the river."), "What can I do outdoors?", session=session
        )
        print("on the fork:", other.final_output)
        for item in await session.get_items():
            content = item["content"]
            print(f"  {item['role']}: {content if isinstance(content, str) else content[0]['text']}")
        session.close()

    # Audit: the session is one journal in the store; the rewind is a leaf move, nothing is erased.
    waybook = [sys.executable, "-m", "waybook"]
    in_store = ["--store", f"file:{directory}/store", session.journal_id]
    subprocess.run([*waybook, "verify", *in_store], check=True)
    subprocess.run([*waybook, "tree", *in_store], check=True)
    training = f"{directory}/trip-planning.openai.jsonl"
    subprocess.run(
        [*waybook, "export", *in_store, "--format", "openai", "--branches", "all", "-o", training], check=True
    )
    print("both branches as OpenAI fine-tuning data:", training)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="waybook-openai-agents-")))
