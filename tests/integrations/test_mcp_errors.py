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


# --- issue 43: quiet, one-line, bounded ------------------------------------------------------------


def call_all(tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], *extra: str) -> tuple[list[Any], str]:
    """Each call's result, and what the server wrote on stderr meanwhile."""
    paths = [tmp_path / name for name in ("w.jsonl", "c.jsonl", "p.jsonl")]
    args = ["-m", "waybook.integrations.mcp", "--working", str(paths[0]), "--canonical", str(paths[1])]
    params = StdioServerParameters(command=sys.executable, args=[*args, "--pins", str(paths[2]), *extra])
    errors = tmp_path / "stderr.txt"

    async def session() -> list[Any]:
        with errors.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = asyncio.run(session())
    return results, errors.read_text()


FAILING = [
    ("remember", {"request_id": "r1", "puts": {"/memories/b.md": "fact"}}),
    ("remember", {"request_id": "r2", "puts": {"/memories/b.md/c.md": "x"}}),
    ("remember", {"request_id": 5, "puts": {"/memories/c.md": "x"}}),
    ("memory", {"command": "create", "path": "/memories/../x.md", "text": "x"}),
    ("memory", {"command": "view", "path": 7}),
    ("memory", {"command": "create", "path": "/memories/d.md", "text": "x", "insert_line": "two"}),
    ("query", {"keys": "not-a-list"}),
    ("explain", {"handle": "h"}),
    ("nominate", {"keys": ["/memories/nope.md"], "route": "none", "purpose": "x"}),
]


def is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def test_without_debug_failed_calls_write_nothing_on_stderr(tmp_path: Path) -> None:
    results, stderr = call_all(tmp_path, FAILING)
    assert sum(is_error(r) for r in results) >= 6
    assert stderr.strip() == "", stderr[:2000]


def test_with_debug_failed_calls_are_logged(tmp_path: Path) -> None:
    _, stderr = call_all(tmp_path, FAILING, "--debug")
    assert "failed" in stderr or "rejected" in stderr or "Traceback" in stderr


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("remember", {"request_id": 5, "puts": {"/memories/c.md": "x"}}, "request_id"),
        ("remember", {"request_id": "r", "puts": ["a", "b"]}, "puts"),
        ("memory", {"command": "view", "path": 7}, "path"),
        (
            "memory",
            {"command": "create", "path": "/memories/d.md", "text": "x", "insert_line": "two"},
            "insert_line",
        ),
        ("query", {"keys": "not-a-list"}, "keys"),
    ],
)
def test_an_argument_of_the_wrong_type_is_one_typed_line_naming_it(
    tmp_path: Path, name: str, arguments: dict[str, Any], field: str
) -> None:
    (result,), _ = call_all(tmp_path, [(name, arguments)])
    assert is_error(result)
    text = result.content[0].text
    assert "\n" not in text, text
    assert text.startswith(f"Error executing tool {name}: InvalidArgument: {field}"), text


def test_a_1_mib_request_id_or_call_id_is_refused_and_never_written(tmp_path: Path) -> None:
    huge = "i" * (1 << 20)
    calls = [
        ("remember", {"request_id": huge, "puts": {"/memories/a.md": "fact"}}),
        ("memory", {"command": "create", "path": "/memories/b.md", "text": "x", "call_id": huge}),
    ]
    (remembered, created), _ = call_all(tmp_path, calls)
    assert is_error(remembered)
    assert "request_id is longer than 1024 bytes" in remembered.content[0].text
    text = created.content[0].text
    assert "INVALID_ARGUMENT" in text, text[:300]
    assert "call_id is longer than 1024 bytes" in text, text[:300]
    for path in tmp_path.glob("*.jsonl"):
        assert huge[:4096] not in path.read_text()
        assert path.stat().st_size < 64 * 1024
