"""docs/postgresql.md runs: every Python block in it executes against the test server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "postgresql.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_every_example_in_the_postgresql_doc_runs(block: str, pg_url: str) -> None:
    env = {**os.environ, "WAYBOOK_POSTGRES_URL": pg_url}
    run = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, check=False, timeout=120, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("True ")
