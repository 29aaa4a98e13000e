"""The code in the memory, canonical-memory, reflection, search and memory-git docs runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    "page", ["memory.md", "canonical-memory.md", "reflection.md", "search.md", "memory-git.md"]
)
def test_every_code_block_of_the_memory_docs_runs(page: str, tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)
    assert blocks
    env = {**os.environ, "PYTHONPATH": str(DOCS.parent)}  # this checkout's waybook, not an installed one
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{page}:\n{block}\n{done.stderr[-2000:]}"
