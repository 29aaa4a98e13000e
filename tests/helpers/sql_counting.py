"""Counting the SQL statements a piece of code runs on SQLite: every connection opened while the counter
is installed reports each statement it runs (sqlite3's trace callback; nothing is mocked)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class Statements:
    """The statements run so far, in order, by connections opened under `counting_statements`."""

    def __init__(self) -> None:
        self.run: list[str] = []

    def reset(self) -> None:
        self.run.clear()

    def reads(self) -> list[str]:
        """The statements that read rows (SELECT), PRAGMAs and transaction control left out."""
        return [statement for statement in self.run if statement.lstrip().upper().startswith("SELECT")]


@contextmanager
def counting_statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[Statements]:
    """Within the block, every sqlite3 connection opened records its statements into the result."""
    statements = Statements()
    connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.run.append)
        return conn

    with monkeypatch.context() as patch:
        patch.setattr(sqlite3, "connect", traced)
        yield statements
