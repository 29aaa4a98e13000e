"""Issue 39.9: CI never depends on the luck of the draw. Under CI=true every property test draws the
same examples on every run, with no example database; a local run draws afresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import ROOT

DRAWING = """
import json

import tests.conftest  # the test-wide settings, as pytest loads them
from hypothesis import given, settings, strategies as st

drawn = []


@given(st.integers())
def draw(n):
    drawn.append(n)


draw()
print(json.dumps({"drawn": drawn, "database": repr(settings.default.database)}))
"""


def drawn(tmp_path: Path, *, ci: bool) -> dict[str, object]:
    """What one run of a property test draws with the test-wide settings, and the database it keeps."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"PYTHONPATH": str(ROOT), **({"CI": "true"} if ci else {})}
    done = subprocess.run(
        [sys.executable, "-c", DRAWING], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_under_ci_two_runs_draw_the_same_examples_and_keep_no_database(tmp_path: Path) -> None:
    first, second = drawn(tmp_path, ci=True), drawn(tmp_path, ci=True)
    assert first == second
    assert first["database"] == "None"
    assert not (tmp_path / ".hypothesis").exists()


def test_a_local_run_draws_afresh(tmp_path: Path) -> None:
    assert drawn(tmp_path, ci=False)["drawn"] != drawn(tmp_path, ci=False)["drawn"]
