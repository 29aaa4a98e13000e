"""The MCP server answers a failing call with the typed error's code and message (issue 27, finding 6):
not a bare "Error executing tool X", and no traceback on its stderr unless it runs with --debug."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


def call_failing(tmp_path: Path, *extra: str) -> tuple[Any, str]:
    paths = [tmp_path / name for name in ("w.jsonl", "c.jsonl", "p.jsonl")]
    args = ["-m", "waybook.integrations.mcp", "--working", str(paths[0]), "--canonical", str(paths[1])]
    params = StdioServerParameters(command=sys.executable, args=[*args, "--pins", str(paths[2]), *extra])
    errors = tmp_path / "stderr.txt"

    async def session() -> Any:
        with errors.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                await client.call_tool("remember", {"request_id": "r1", "puts": {"/memories/b.md": "fact"}})
                return await client.call_tool(
                    "remember", {"request_id": "r2", "puts": {"/memories/b.md/c.md": "x"}}
                )

    result = asyncio.run(session())
    return result, errors.read_text()


def test_a_refused_call_returns_the_error_code_and_message_and_prints_no_traceback(tmp_path: Path) -> None:
    result, stderr = call_failing(tmp_path)
    assert getattr(result, "is_error", getattr(result, "isError", False))
    text = result.content[0].text
    assert re.match(r"Error executing tool remember: [A-Za-z]+Error: \S", text), text
    assert "\n" not in text
    assert "Traceback" not in stderr


def test_with_debug_the_server_prints_the_traceback(tmp_path: Path) -> None:
    result, stderr = call_failing(tmp_path, "--debug")
    assert re.match(r"Error executing tool remember: [A-Za-z]+Error: ", result.content[0].text)
    assert "Traceback" in stderr
