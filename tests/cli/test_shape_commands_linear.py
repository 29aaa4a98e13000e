"""Every command bench/shapes.py times is linear in the records on the deep branchy shape (issue 50),
counted in calls, not timed: the whole command as a user runs it (the open and its proof, the
replay, the projection, the output), so a walk of the path per branch or per move anywhere on the
way shows as about 16x the calls at 4x the levels, where linear work makes about 4x."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import pytest

import waybook
import waybook.cli
from tests.helpers.shapes import deep_branchy_records, growth, write_file

COMMANDS: dict[str, list[str]] = {
    "tree": ["tree", "{path}"],
    "stats": ["stats", "{path}"],
    "stats --json": ["stats", "--json", "{path}"],
    "view": ["view", "{path}", "-o", "{out}.html", "--force"],
    "export": ["export", "{path}", "--format", "openai", "-o", "{out}.jsonl", "--force"],
}
"""bench/shapes.py's commands (`resume` is the library call, below)."""


def _command(tmp: Path, name: str) -> Callable[[int], Callable[[], object]]:
    def make(levels: int) -> Callable[[], object]:
        path = tmp / f"deep-{levels}.jsonl"
        if not path.exists():
            write_file(path, deep_branchy_records(levels, tools=True))
        args = [a.format(path=path, out=tmp / f"out-{levels}") for a in COMMANDS[name]]

        def run() -> None:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert waybook.cli.main(args) == 0

        run()  # once before counting: the first run's imports and caches are no part of the growth
        return run

    return make


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_makes_calls_linear_in_the_records_of_a_deep_branchy_session(
    tmp_path: Path, name: str
) -> None:
    assert growth(_command(tmp_path, name), small=250, large=1000) < 4.4


def test_resume_makes_calls_linear_in_the_records_of_a_deep_branchy_session(tmp_path: Path) -> None:
    def make(levels: int) -> Callable[[], object]:
        path = write_file(tmp_path / f"deep-{levels}.jsonl", deep_branchy_records(levels, tools=True))

        def run() -> None:
            waybook.resume(path).journal.close()

        run()  # once before counting, as above
        return run

    assert growth(make, small=250, large=1000) < 4.4
