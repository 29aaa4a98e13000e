"""LangGraph threads for the tests: the fixture stores (copied before use: reading a store writes its lock)
and the fixture's own generator (fixtures/langgraph/generate_saver.py), loaded from its file."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers.paths import FIXTURES

HERE = FIXTURES / "langgraph"
THREAD_JOURNAL = "langgraph-7026d15e9893cb0128efe2fe-e3b0c44298fc1c149afbf4c8"
"""The journal of the fixture's thread ("support-chat") in both fixture stores."""


def generator() -> ModuleType:
    """fixtures/langgraph/generate_saver.py: the scripted tool-calling graph the fixture stores hold."""
    spec = importlib.util.spec_from_file_location("generate_saver", HERE / "generate_saver.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixture_store(name: str, into: Path) -> str:
    """A copy of the fixture store `name` (`saver-store`, `before-nodes`) under `into`, as a store URL."""
    target = into / name
    shutil.copytree(HERE / name, target)
    return f"file:{target}"


def journal_lines(url: str) -> list[bytes]:
    path = Path(url.removeprefix("file:")) / "journals" / f"{THREAD_JOURNAL}.jsonl"
    return path.read_bytes().splitlines(keepends=True)


def message_view(body: Any) -> tuple[Any, ...]:
    """What a session node says, for comparing two writers' nodes (ids and times aside)."""
    return (type(body).__name__, getattr(body, "content", None), getattr(body, "usage", None), body.details)
