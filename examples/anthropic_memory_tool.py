"""Anthropic's memory tool on a waybook journal, run by the SDK's own tool runner with a scripted model.

No network and no API key: a scripted Messages API answers the runner. Every memory write is a journal
record; the runtime puts each write's receipt into its session's tool-result entry, so an auditor can
go from the conversation to the exact memory record it caused.
Run: python examples/anthropic_memory_tool.py
"""

import json
import tempfile
from pathlib import Path

import anthropic
import httpx2

from waybook import JsonlJournal, Session, verify
from waybook.integrations.anthropic_memory import WaybookMemoryTool
from waybook.memory import Memory

TURNS = [
    [
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "memory",
            "input": {"command": "view", "path": "/memories"},
        }
    ],
    [
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "memory",
            "input": {"command": "create", "path": "/memories/prefs.md", "file_text": "- drinks tea\n"},
        }
    ],
    [{"type": "text", "text": "I'll remember that you drink tea."}],
]


def scripted_messages_api(request: httpx2.Request) -> httpx2.Response:
    content = TURNS.pop(0)
    stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
    reply = {
        "id": "msg",
        "type": "message",
        "role": "assistant",
        "model": "scripted",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return httpx2.Response(200, json=reply)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="waybook-memory-"))
    memory = Memory(JsonlJournal(folder / "memory.jsonl"), scope="ada")
    session = Session.create(JsonlJournal(folder / "session.jsonl"), journal_id="chat-1")
    tool = WaybookMemoryTool(memory)
    client = anthropic.Anthropic(
        api_key="scripted", http_client=httpx2.Client(transport=httpx2.MockTransport(scripted_messages_api))
    )
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=256,
        tools=[tool],
        messages=[{"role": "user", "content": "Remember that I drink tea."}],
    )
    for message in runner:
        runner.generate_tool_call_response()  # runs this turn's tool calls now
        uses = [block for block in message.content if block.type == "tool_use"]
        for use, call in zip(uses, tool.take_calls(), strict=True):
            details = call.receipt.as_details() if call.receipt else None
            session.tool_result(
                use.id, call.text, tool_name="memory", is_error=call.is_error, details=details
            )
            print(f"{use.id} {use.input['command']:6} -> {call.text.splitlines()[0]}")
        if message.stop_reason == "end_turn":
            print(f"assistant: {message.content[0].text}")

    print("memory:", json.dumps({path: f.text for path, f in memory.state().files.items()}))
    receipt = [r for r in session.journal.read() if r.kind == "waybook.tool_result/1"][-1].body.details
    print("receipt in the session:", json.dumps(receipt["memory_receipt"], sort_keys=True)[:96], "...")
    print("memory journal:", verify(JsonlJournal(folder / "memory.jsonl")))


if __name__ == "__main__":
    main()
