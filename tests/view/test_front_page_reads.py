"""serve's front page on a database store proves its page of journals read together (issue 50, big
stores): the statements a page runs do not grow with the journals it lists, and every listed journal
is still proven (a damaged one shows its damage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import store_damage
from tests.helpers.builders import fill_store, titled_at
from tests.helpers.sql_counting import counting_statements
from tests.helpers.viewer import front_page
from waybook.stores import open_store
from waybook.view import ViewServer


def test_the_front_page_runs_as_many_statements_for_fifty_journals_as_for_five(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = {}
    for journals in (5, 50):
        url = f"sqlite:{tmp_path}/store-{journals}.db"
        fill_store(url, journals)
        store_damage.alter_record(url, "j003", 2)
        with counting_statements(monkeypatch) as statements:
            server = ViewServer(url)
            try:
                server.front_page(1)  # the store opened
                statements.reset()
                page = server.front_page(1)
            finally:
                server.server_close()
        counts[journals] = len(statements.reads())
        assert page.count('class="ok">verified') == journals - 1
        assert page.count('class="damaged"') == 1
    assert counts[50] == counts[5]
    assert counts[5] <= 6  # the count, the page's cursor and listing, its rows, its lines


@pytest.mark.parametrize("seq", [2, 9, 10, 64], ids=str)
def test_a_front_page_row_is_titled_by_its_first_user_message_in_the_first_64_records(
    tmp_path: Path, seq: int
) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store, store.create("late") as journal:
        batch = titled_at(seq, 69)
        journal.append(batch, expected=journal.head())
    page = front_page(url)
    assert f"<td>message {seq}</td>" in page
