"""Issue 13: untrusted code reaches memory from outside the host process, over MCP (stdio).

A real MCP client session starts the server as a subprocess and calls its tools; the host face is never
among them.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from waybook.journal import JsonlJournal
from waybook.memory.working._state import MemoryProjection
from waybook.projections import replay

mcp = pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def is_error(result: Any) -> bool:
    """`is_error` in mcp 2 (`isError` in mcp 1)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def structured(result: Any) -> Any:
    assert not is_error(result), result.content
    data = getattr(result, "structured_content", getattr(result, "structuredContent", None))
    if data is not None:
        return data.get("result", data)
    return json.loads(result.content[0].text)


def test_the_mcp_server_exposes_memory_and_the_agent_face_but_never_the_host(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("w.jsonl", "c.jsonl", "p.jsonl")]
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "waybook.integrations.mcp",
            "--working",
            str(paths[0]),
            "--canonical",
            str(paths[1]),
            "--pins",
            str(paths[2]),
            "--route",
            "team:facts",
        ],
    )

    async def session() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"memory", "remember", "query", "explain", "nominate"}
            created = structured(
                await client.call_tool(
                    "memory", {"command": "create", "path": "/memories/a.md", "text": "hi", "call_id": "t1"}
                )
            )
            assert created["ok"] is True
            hostile = structured(
                await client.call_tool(
                    "memory", {"command": "create", "path": "/memories/../x.md", "text": "x"}
                )
            )
            assert hostile["error"]["code"] == "INVALID_PATH"
            patch = "*** Begin Patch\n*** Add File: /memories/p.md\n+patched\n*** End Patch"
            patched = structured(await client.call_tool("memory", {"command": "apply_patch", "patch": patch}))
            assert patched["value"]["added"] == ["/memories/p.md"]
            described = structured(
                await client.call_tool(
                    "memory", {"command": "update_description", "path": "/memories/p.md", "description": "d"}
                )
            )
            assert described["ok"] is True
            remembered = structured(
                await client.call_tool("remember", {"request_id": "r1", "puts": {"/memories/b.md": "fact"}})
            )
            assert remembered["request_id"] == "r1"
            nominated = structured(
                await client.call_tool(
                    "nominate", {"keys": ["/memories/b.md"], "route": "team", "purpose": "facts"}
                )
            )
            assert nominated["keys"] == ["/memories/b.md"]
            assert structured(await client.call_tool("query", {}))["records"] == []
            refused = await client.call_tool(
                "remember", {"request_id": "r2", "puts": {"/memories/b.md/c.md": "x"}}
            )
            assert is_error(refused)  # the journal's memory rules answer remote callers too

    asyncio.run(session())
    with JsonlJournal(paths[0], readonly=True) as working:
        state = replay(MemoryProjection(), working)
    assert sorted(state.files) == ["/memories/a.md", "/memories/b.md", "/memories/p.md"]
