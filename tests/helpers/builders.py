"""Small builders that keep tests reading like the spec (the record builders are the contract kit's)."""

from __future__ import annotations

import itertools

from waybook.model import AnyBody, AssistantMessage, NewRecord, SystemMessage, TextBlock, UserMessage
from waybook.stores import open_store
from waybook.testing._records import AT, assistant, chat, header, move, reset, user

__all__ = [
    "AT",
    "assistant",
    "chat",
    "fill_store",
    "fresh_id",
    "header",
    "move",
    "reset",
    "titled_at",
    "user",
]

_counter = itertools.count(1)


def fresh_id(prefix: str = "r") -> str:
    return f"{prefix}{next(_counter)}"


def titled_at(seq: int, last: int) -> list[NewRecord]:
    """Records 2 to `last` (a header goes first), system and assistant messages but for one user message,
    record `seq`: where a title scan has to look for the title."""
    records, parent = [], None
    for n in range(2, last + 1):
        content = (TextBlock(text=f"message {n}"),)
        body: AnyBody
        if n == seq:
            body = UserMessage(parent=parent, content=content)
        elif n % 2:
            body = SystemMessage(parent=parent, content=content)
        else:
            body = AssistantMessage(parent=parent, content=content, stop_reason="end_turn")
        records.append(NewRecord(id=f"r{n}", at="2026-01-01T00:00:00Z", body=body))
        parent = f"r{n}"
    return records


def fill_store(url: str, journals: int) -> None:
    """`journals` journals `j000`, `j001`, ... of four chat records each, in the store at `url`."""
    with open_store(url) as store:
        for n in range(journals):
            with store.create(f"j{n:03d}") as journal:
                journal.append(list(chat(4)), expected=journal.head())
