"""The examples of the four runtimes of issue 34 run as they are (scripted models, no network) and print
what their docs say. Each is skipped where its runtime is not installed; its suite
(scripts/runtime_suites/) runs it where it is."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DOCS = EXAMPLES.parent / "docs"


def run(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_the_pydantic_ai_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pydantic_ai")
    out = run("pydantic_ai_history.py", capsys)
    assert "after restart: You like tea." in out
    assert "undone: 2 messages; the history has 2" in out
    assert "stale writer refused" in out
    assert "chain ok True" in out


def test_the_llama_index_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_index.core")
    out = run("llama_index_chat_store.py", capsys)
    assert "after restart: 4 messages" in out
    assert "deleted: my card is 4111 -> 3 messages" in out
    assert "stale writer refused" in out
    assert "the journal still holds the deleted message: True" in out
    assert "chain ok True" in out


def test_the_agent_framework_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("agent_framework")
    out = run("agent_framework_history.py", capsys)
    assert "after restart: You like tea." in out
    assert "stale writer refused" in out
    assert "after clear: 0 messages" in out
    assert "the journal still holds them: True" in out
    assert "chain ok True" in out


def test_the_strands_example(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("strands")
    out = run("strands_session.py", capsys)
    assert "after restart: You like tea. (4 messages)" in out
    assert "the agent sees: [redacted]" in out
    assert "stale writer refused: Message 0 already exists" in out
    assert "the journal still holds the original: True" in out
    assert "chain ok True" in out


@pytest.mark.parametrize(
    ("page", "module"),
    [
        ("pydantic-ai.md", "pydantic_ai"),
        ("strands.md", "strands"),
        ("agent-framework.md", "agent_framework"),
        ("llama-index.md", "llama_index.core"),
    ],
)
def test_the_python_blocks_of_the_docs_print_what_their_comments_say(
    page: str, module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(module)
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), {"__name__": "__docs__"})
        expected = [m.strip() for m in re.findall(r"^\s*print\(.*\)\s+# (.*)$", block, flags=re.M)]
        assert capsys.readouterr().out.splitlines() == expected
