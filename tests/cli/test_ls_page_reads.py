"""`waybook ls` on a database store reads its page of journals together (issue 50, big stores): the
statements it runs do not grow with the number of journals it lists (on the old code each listed
journal was opened and glanced at on its own: a few statements each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.builders import fill_store
from tests.helpers.cli_runner import waybook
from tests.helpers.sql_counting import counting_statements


def test_ls_runs_as_many_statements_for_forty_journals_as_for_four(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    fill_store(url, 40)
    counts = {}
    for limit in (4, 40):
        with counting_statements(monkeypatch) as statements:
            done = waybook("ls", "--store", url, "--limit", str(limit))
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("question 0") == limit
        counts[limit] = len(statements.reads())
    assert counts[40] == counts[4]
    assert counts[4] <= 12  # opening the store, the listing, the page's rows and its lines
