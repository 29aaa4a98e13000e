"""`python -m waybook.integrations.mcp --redact` (`MemoryToolServer(redact=...)`, issue 46): the texts
a memory call writes and `remember`'s values are masked before memory stores them; an edit naming the
secret still finds the masked text; a pattern that does not compile is a usage error naming the flag."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers.redaction import DB, TOKEN, assert_no_secret_in, raw_bytes

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("memory", {"command": "create", "path": "/memories/deploy.md", "text": f"token: {TOKEN.text}\n"}),
    (
        "memory",
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_text": TOKEN.text,
            "new_text": "rotated",
        },
    ),
    ("remember", {"request_id": "r1", "puts": {"/memories/db.md": f"db: {DB.text}"}}),
    ("memory", {"command": "view", "path": "/memories/db.md"}),
]


def serve(tmp_path: Path, *extra: str) -> list[Any]:
    paths = [tmp_path / name for name in ("w.jsonl", "c.jsonl", "p.jsonl")]
    args = ["-m", "waybook.integrations.mcp", "--working", str(paths[0]), "--canonical", str(paths[1])]
    params = StdioServerParameters(command=sys.executable, args=[*args, "--pins", str(paths[2]), *extra])

    async def session() -> list[Any]:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return [await client.call_tool(name, arguments) for name, arguments in CALLS]

    return asyncio.run(session())


def test_with_redact_no_secret_reaches_the_memory_journals(tmp_path: Path) -> None:
    results = serve(tmp_path, "--redact")
    assert not any(getattr(r, "is_error", getattr(r, "isError", False)) for r in results), results
    assert "[REDACTED:url-password]" in results[-1].content[0].text
    assert_no_secret_in(tmp_path)


def test_without_redact_the_secret_is_stored(tmp_path: Path) -> None:
    serve(tmp_path)
    assert DB.core.encode() in raw_bytes(tmp_path)  # the test above can fail


def test_a_redact_pattern_that_does_not_compile_names_the_flag(tmp_path: Path) -> None:
    working, canonical, pins = (str(tmp_path / name) for name in ("w.jsonl", "c.jsonl", "p.jsonl"))
    journals = ["--working", working, "--canonical", canonical, "--pins", pins]
    done = subprocess.run(
        [sys.executable, "-m", "waybook.integrations.mcp", *journals, "--redact-pattern", "("],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("waybook mcp: --redact-pattern: ")
