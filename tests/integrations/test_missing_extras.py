"""An integration used without its runtime says which extra to install (issue 34), never a raw
ModuleNotFoundError. Each case runs in a fresh interpreter whose importer refuses the runtime's modules,
as if the extra had not been installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from waybook.integrations._extras import needs_extra
from waybook.integrations.errors import MissingExtraError

BLOCKER = """
import importlib.abc, sys

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from waybook.integrations.errors import MissingExtraError
try:
    USE
except MissingExtraError as error:
    print("MissingExtraError:", error)
"""

CASES = {
    "langgraph": (("langgraph", "langchain_core"), "import waybook.integrations.langgraph"),
    "openai-agents": (
        ("agents",),
        "from waybook.integrations.openai_agents import WaybookSession\n"
        "    WaybookSession('s', __import__('waybook.stores').stores.open_store('memory:'))",
    ),
    "pydantic-ai": (("pydantic_ai",), "from waybook.integrations.pydantic_ai import WaybookMessageHistory"),
    "strands": (("strands",), "from waybook.integrations.strands import WaybookSessionRepository"),
    "agent-framework": (
        ("agent_framework",),
        "from waybook.integrations.agent_framework import WaybookHistoryProvider",
    ),
    "llama-index": (("llama_index",), "from waybook.integrations.llama_index import WaybookChatStore"),
    "adk": (("google",), "from waybook.integrations.adk import WaybookSessionService"),
    "anthropic": (("anthropic",), "from waybook.integrations.anthropic_memory import WaybookMemoryTool"),
    # The SDK is imported at the first write that folds a summary, not at import time.
    "claude-agent-sdk": (
        ("claude_agent_sdk",),
        "import asyncio; from waybook.stores import open_store\n"
        "    from waybook.integrations.claude_agent_sdk import WaybookSessionStore\n"
        "    key = {'project_key': 'p', 'session_id': 's'}\n"
        "    store = WaybookSessionStore(open_store('memory:'))\n"
        "    asyncio.run(store.append(key, [{'uuid': 'u', 'type': 'user'}]))",
    ),
}


def run_without(blocked: tuple[str, ...], use: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(BLOCKER).replace("USE", use).replace("BLOCKED", repr(set(blocked)))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("extra", sorted(CASES))
def test_a_missing_runtime_names_the_extra_to_install(extra: str) -> None:
    blocked, use = CASES[extra]
    done = run_without(blocked, use)
    assert done.returncode == 0, done.stderr
    assert "MissingExtraError:" in done.stdout
    assert f"pip install 'waybook[{extra}]'" in done.stdout


def test_a_missing_module_that_is_not_the_runtime_is_raised_as_it_is() -> None:
    with (
        pytest.raises(ModuleNotFoundError) as raised,
        needs_extra("x", runtime="X", extra="x", modules=("x",)),
    ):
        import waybook_no_such_module  # noqa: F401
    assert not isinstance(raised.value, MissingExtraError)
