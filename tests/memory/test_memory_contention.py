"""Issue 40, point 2: reflection bookkeeping never competes with memory writes, across real processes.

Two processes share one JSONL memory journal: one makes 1,000 Memory port writes of independent notes,
the other runs 1,000 reflection cycles (reserve, start, finish). Every write and every cycle goes
through: a race lost to the other side's records (which touch other notes, or no note) is rebased,
never reported as a CONFLICT. Before the fix the same run gave 12-18 spurious CONFLICTs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from waybook.journal import JsonlJournal
from waybook.memory import Memory

COUNT = 1_000


def contend(tmp_path: Path, count: int) -> tuple[dict[str, object], dict[str, object]]:
    path = tmp_path / "memory.jsonl"
    with JsonlJournal(path) as journal:
        Memory(journal, scope="agent")  # the header
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ready = [tmp_path / "notes.ready", tmp_path / "reflection.ready"]
    sides = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.helpers.memory_contention",
                str(path),
                side,
                str(count),
                str(ready[i]),
                str(ready[1 - i]),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, side in enumerate(("notes", "reflection"))
    ]
    outcomes = []
    for process in sides:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
        outcomes.append(json.loads(out))
    return outcomes[0], outcomes[1]


@pytest.mark.slow
def test_a_thousand_writes_beside_a_thousand_reflection_cycles_get_no_conflict(tmp_path: Path) -> None:
    notes, reflection = contend(tmp_path, COUNT)
    assert notes == {"done": COUNT, "failures": {}}
    assert reflection == {"done": COUNT, "failures": {}}


def test_a_short_contention_run_gets_no_conflict(tmp_path: Path) -> None:
    notes, reflection = contend(tmp_path, 50)
    assert notes == {"done": 50, "failures": {}}
    assert reflection == {"done": 50, "failures": {}}
