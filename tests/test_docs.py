"""Docs that run: the README's code and commands are what the project really does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.runtimes import installed

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


# --- issue 14: every code block runs ----------------------------------------------------------------

DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
SUITE_ONLY_RUNTIMES = {
    "adk.md": "google.adk",
    "agent-framework.md": "agent_framework",
    "claude-agent-sdk.md": "claude_agent_sdk",
    "langgraph.md": "langgraph",
    "llama-index.md": "llama_index",
    "openai-agents.md": "agents",
    "pydantic-ai.md": "pydantic_ai",
    "strands.md": "strands",
}
"""Pages of runtimes the test extra leaves out: each runs in its suite's venv (tests/helpers/runtimes.py)."""
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", flags=re.S | re.M)
BLOCKS = [
    (doc, number, language, code)
    for doc in DOCS
    for number, (language, code) in enumerate(FENCE.findall(doc.read_text()), start=1)
]


def test_every_fenced_block_says_what_it_is() -> None:
    untagged = [
        f"{doc.name} block {n}" for doc, n, language, _ in BLOCKS if language not in ("python", "sh", "text")
    ]
    assert untagged == [], "tag each block python, sh (both run in the tests) or text (output, diagrams)"


SLOW_BLOCKS = {("journal-contract.md", 1)}
"""Blocks run only with `-m slow`: journal-contract.md's runs the whole contract kit at full size on two
adapters (9 s; tests/conformance runs the kit on every adapter in the default run)."""


@pytest.mark.parametrize(
    ("doc", "number", "language", "code"),
    [
        pytest.param(*b, marks=pytest.mark.slow) if (b[0].name, b[1]) in SLOW_BLOCKS else b
        for b in BLOCKS
        if b[2] in ("python", "sh")
    ],
    ids=[f"{b[0].name}-{b[1]}" for b in BLOCKS if b[2] in ("python", "sh")],
)
def test_every_code_block_in_the_docs_runs(
    doc: Path, number: int, language: str, code: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    runtime = SUITE_ONLY_RUNTIMES.get(doc.name)
    if runtime is not None and not installed(runtime):
        pytest.skip(
            f"{runtime} is installed only in its suite's venv (scripts/runtime_suites/), which runs this"
        )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if "WAYBOOK_POSTGRES_URL" in code:  # the PostgreSQL page's blocks run against the tests' own server
        env["WAYBOOK_POSTGRES_URL"] = request.getfixturevalue("pg_url")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    command = [sys.executable, "-c", code] if language == "python" else ["bash", "-e", "-c", code]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, f"{doc.name} block {number}:\n{run.stderr[-2000:]}"


# --- issue 31: the design's examples run and print what they show ---------------------------------

DESIGN_EXAMPLES = {
    "app_values.py": "after the rename: RenamedPlan(goal='ship the release', current_value=3)",
    "fork_session.py": "source records: 5 fork records: 3",
    "context_usage.py": "with another tool: the request's tools changed",
    "feed_subscriber.py": "run 2: cursor 6, 4 records indexed",
    "coordination_diamond.py": "D = {'sum': 15} from ['B', 'C']",
}


@pytest.mark.parametrize("name", sorted(DESIGN_EXAMPLES))
def test_the_design_examples_run(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(ROOT / "examples" / name)]
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert DESIGN_EXAMPLES[name] in run.stdout
