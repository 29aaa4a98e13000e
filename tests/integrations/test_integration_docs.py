"""The integration docs and examples run, and print what they say they print."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("agents")

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ["langgraph.md", "openai-agents.md"]


def python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / doc).read_text(), flags=re.S)


@pytest.mark.parametrize("doc", DOCS)
def test_every_code_block_runs_and_prints_what_its_comments_say(
    doc: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocks = python_blocks(doc)
    assert blocks
    for number, block in enumerate(blocks):
        script = tmp_path / f"block{number}.py"
        script.write_text(block)
        runpy.run_path(str(script), run_name="__main__")
        expected = [m.strip() for m in re.findall(r"^\s*print\(.*\)\s+# (.*)$", block, flags=re.M)]
        assert capsys.readouterr().out.splitlines() == expected


def run_example(
    name: str, directory: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """Run examples/<name> as a script (in this process; its `waybook` commands run as subprocesses)."""
    monkeypatch.setattr(sys, "argv", [name, str(directory)])
    runpy.run_path(str(ROOT / "examples" / name), run_name="__main__")
    return capfd.readouterr().out


def test_the_langgraph_example_resumes_forks_and_audits(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_example("langgraph_chat.py", tmp_path, capfd, monkeypatch)
    restart, fork = out.split("on the fork:")
    assert "ai: Four days is enough." in restart
    assert "ai: Pack a coat." in fork
    assert "Lisbon" not in fork
    assert ": ok, " in out
    assert "continues from" in " ".join(out.split())
    assert (tmp_path / "trip-planning.archive.jsonl").stat().st_size > 0


def test_the_openai_agents_example_resumes_forks_and_exports_both_branches(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_example("openai_agents_chat.py", tmp_path, capfd, monkeypatch)
    assert "after the restart: Trams and pastéis de nata. (6 items)" in out
    assert "assistant: Rent a bike along the river." in out
    assert "pop_item" in out
    exported = (tmp_path / "trip-planning.openai.jsonl").read_text().splitlines()
    assert len(exported) == 2
