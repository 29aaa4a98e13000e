"""Small builders that keep tests reading like the spec (the record builders are the contract kit's)."""

from __future__ import annotations

import itertools

from waybook.testing._records import AT, assistant, chat, header, move, reset, user

__all__ = ["AT", "assistant", "chat", "fresh_id", "header", "move", "reset", "user"]

_counter = itertools.count(1)


def fresh_id(prefix: str = "r") -> str:
    return f"{prefix}{next(_counter)}"
