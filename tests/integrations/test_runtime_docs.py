"""The code in the runtime docs runs and prints what the docs say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(page: str, after: str = "") -> list[str]:
    text = (DOCS / page).read_text()
    return re.findall(r"```python\n(.*?)```", text[text.index(after) :], flags=re.S)


@pytest.mark.parametrize(
    ("page", "after", "module", "printed"),
    [
        ("claude-agent-sdk.md", "", "claude_agent_sdk", "'uuid': 'u-1'"),
        ("adk.md", "", "google.adk", "stale session refused\n{'k': 1, 'user:drink': 'tea'}"),
        ("memory.md", "## Anthropic's memory tool", "anthropic", "     1\ttea"),
    ],
)
def test_the_python_blocks_run(
    page: str, after: str, module: str, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip(module)
    for block in blocks(page, after):
        exec(compile(block, f"docs/{page}", "exec"), {"__name__": "__docs__"})
    assert printed in capsys.readouterr().out
