"""serve's front page on a database store proves its page of journals read together (issue 50, big
stores): the statements a page runs do not grow with the journals it lists, and every listed journal
is still proven (a damaged one shows its damage)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import store_damage
from tests.helpers.builders import chat
from tests.helpers.sql_counting import counting_statements
from waybook.model import AssistantMessage, NewRecord, SystemMessage, TextBlock, UserMessage
from waybook.stores import open_store
from waybook.view import ViewServer


def fill(url: str, journals: int) -> None:
    with open_store(url) as store:
        for n in range(journals):
            with store.create(f"j{n:03d}") as journal:
                journal.append(list(chat(4)), expected=journal.head())


def test_the_front_page_runs_as_many_statements_for_fifty_journals_as_for_five(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = {}
    for journals in (5, 50):
        url = f"sqlite:{tmp_path}/store-{journals}.db"
        fill(url, journals)
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
        batch, parent = [], None
        for n in range(2, 70):
            content = (TextBlock(text=f"message {n}"),)
            body: Any
            if n == seq:
                body = UserMessage(parent=parent, content=content)
            elif n % 2:
                body = SystemMessage(parent=parent, content=content)
            else:
                body = AssistantMessage(parent=parent, content=content, stop_reason="end_turn")
            batch.append(NewRecord(id=f"r{n}", at="2026-01-01T00:00:00Z", body=body))
            parent = f"r{n}"
        journal.append(batch, expected=journal.head())
    server = ViewServer(url)
    try:
        page = server.front_page(1)
    finally:
        server.server_close()
    assert f"<td>message {seq}</td>" in page
