"""Docs that run: the README's code and commands are what the project really does."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_the_readme_quickstart_runs_and_matches_the_example_file() -> None:
    (block,) = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert block.strip() == (ROOT / "examples" / "quickstart.py").read_text().split('"""', 2)[2].strip()
    assert len(block.strip().splitlines()) <= 15
    run = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, check=True)
    assert "ok, 7 records" in run.stdout


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"^    (python -m pip install .*)$", README, flags=re.M)
    test_command = next(c for c in commands if "pytest" in c)
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines()


def test_the_projections_worked_example_prints_what_the_doc_says() -> None:
    doc = (ROOT / "docs" / "projections.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, flags=re.S)
    expected = re.search(r"```text\n(.*?)```", doc, flags=re.S)
    assert code is not None
    assert expected is not None
    run = subprocess.run([sys.executable, "-c", code.group(1)], capture_output=True, text=True, check=True)
    assert run.stdout == expected.group(1)
