"""`WaybookMemoryTool(memory, redact=True)` (issue 46): the text a memory tool call writes is masked
before the memory stores it, and an edit's old text is masked too, so an edit that names the secret
still finds the masked text the file holds."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("anthropic")

import anyio

from tests.helpers.redaction import DB, TOKEN, assert_no_secret_in, raw_bytes
from waybook.integrations.anthropic_memory import AsyncWaybookMemoryTool, WaybookMemoryTool
from waybook.memory import Memory
from waybook.model import InvalidArgumentError
from waybook.stores import open_store

M = "/memories"


def memory(tmp_path: Path) -> Memory:
    """A working memory in a directory store under `tmp_path` (its bytes are what the tests search)."""
    store = open_store(f"file:{tmp_path / 'store'}")
    return Memory(store.create("memory", role="working_memory", metadata={"scope": "claude"}), scope="claude")


def remember(tool: WaybookMemoryTool) -> str:
    tool.call({"command": "create", "path": f"{M}/deploy.md", "file_text": f"token: {TOKEN.text}\n"})
    tool.call(
        {
            "command": "str_replace",
            "path": f"{M}/deploy.md",
            "old_str": TOKEN.text,
            "new_str": f"{TOKEN.text}!",
        }
    )
    tool.call(
        {"command": "insert", "path": f"{M}/deploy.md", "insert_line": 1, "insert_text": f"db: {DB.text}\n"}
    )
    return tool.memory.state().files[f"{M}/deploy.md"].text


def test_the_memory_journal_never_holds_the_secret_and_an_edit_naming_it_still_applies(
    tmp_path: Path,
) -> None:
    text = remember(WaybookMemoryTool(memory(tmp_path), redact=True))
    assert text.startswith("token: [REDACTED:github-token]!\n")
    assert "[REDACTED:url-password]" in text
    assert_no_secret_in(tmp_path)


def test_without_redact_the_secret_is_stored(tmp_path: Path) -> None:
    remember(WaybookMemoryTool(memory(tmp_path)))
    assert TOKEN.core.encode() in raw_bytes(tmp_path)  # the test above can fail


def test_the_async_tool_masks_the_same_way(tmp_path: Path) -> None:
    tool = AsyncWaybookMemoryTool(memory(tmp_path), redact=True)
    anyio.run(tool.call, {"command": "create", "path": f"{M}/a.md", "file_text": TOKEN.text})
    assert TOKEN.core.encode() not in raw_bytes(tmp_path)


def test_a_redact_option_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="WaybookMemoryTool's redact"):
        WaybookMemoryTool(memory(tmp_path), redact="on")  # type: ignore[arg-type]
