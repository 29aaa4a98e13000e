"""The runtime examples run as they are (scripted models, no network) and print what their docs say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=True)
    return done.stdout


def test_the_anthropic_memory_tool_example() -> None:
    pytest.importorskip("anthropic")
    out = run("anthropic_memory_tool.py")
    assert "toolu_2 create -> File created successfully at: /memories/prefs.md" in out
    assert 'memory: {"/memories/prefs.md": "- drinks tea\\n"}' in out
    assert "ok, 2 records" in out


def test_the_claude_agent_sdk_example() -> None:
    pytest.importorskip("claude_agent_sdk")
    out = run("claude_agent_sdk_store.py")
    assert "  assistant Lemonade." in out
    assert out.count("  user ") == 2  # the retried batch added nothing
    assert out.count("chain ok True") == 2  # the session and its fork


def test_the_adk_example() -> None:
    pytest.importorskip("google.adk")
    out = run("adk_session_service.py")
    assert "after restart: 2 events, user:drink = tea" in out
    assert "helper: You like tea." in out
    assert "stale writer refused" in out
    assert out.count(" True") == 2
