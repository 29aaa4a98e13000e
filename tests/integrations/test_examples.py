"""The runtime examples run as they are (scripted models, no network) and print what their docs say."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_the_anthropic_memory_tool_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("anthropic")
    out = run("anthropic_memory_tool.py", capsys)
    assert "toolu_2 create -> File created successfully at: /memories/prefs.md" in out
    assert 'memory: {"/memories/prefs.md": "- drinks tea\\n"}' in out
    assert "ok, 2 records" in out


def test_the_claude_agent_sdk_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("claude_agent_sdk")
    out = run("claude_agent_sdk_store.py", capsys)
    assert "  assistant Lemonade." in out
    assert out.count("  user ") == 2  # the retried batch added nothing
    assert out.count("chain ok True") == 2  # the session and its fork


def test_the_adk_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("google.adk")
    out = run("adk_session_service.py", capsys)
    assert "after restart: 2 events, user:drink = tea" in out
    assert "helper: You like tea." in out
    assert "stale writer refused" in out
    assert out.count("chain ok True") == 2
