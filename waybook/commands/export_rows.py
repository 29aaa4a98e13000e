"""What `waybook export` does to rows on their way out: `--max-rows`, `--last-turns`, `--stats`, and a
progress bar (on a terminal, for exports of journals large enough to take a while)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Final

import attrs

from waybook.commands.exits import warn

PROGRESS_RECORDS: Final = 2_000
"""Exports of journals with at least this many records show a progress bar (about a second's work)."""
CHARS_PER_TOKEN: Final = 4


@attrs.define
class Stats:
    rows: int = 0
    tokens: int = 0
    tool_calls: int = 0
    messages: int = 0


class RowShaper:
    """Rows as the options shape them, counted."""

    def __init__(self, max_rows: int | None, last_turns: int | None) -> None:
        self.max_rows = max_rows
        self.last_turns = last_turns
        self.stats = Stats()
        self.stopped = False

    def rows(self, rows: Iterable[dict[str, Any]], progress: Any) -> Iterator[dict[str, Any]]:
        for row in rows:
            if self.max_rows is not None and self.stats.rows >= self.max_rows:
                self.stopped = True
                return
            if self.last_turns is not None:
                row = last_turns(row, self.last_turns)
            self._count(row)
            progress.advance(self.stats.rows)
            yield row

    def _count(self, row: dict[str, Any]) -> None:
        self.stats.rows += 1
        for key in ("messages", "conversations", "prompt", "chosen", "rejected"):
            for message in row.get(key) or ():
                if not isinstance(message, dict):
                    continue
                self.stats.messages += 1
                self.stats.tool_calls += len(message.get("tool_calls") or ())
                shown = {k: v for k, v in message.items() if k in ("content", "value", "tool_calls")}
                self.stats.tokens += -(-len(json.dumps(shown, ensure_ascii=False)) // CHARS_PER_TOKEN)


def last_turns(row: dict[str, Any], n: int) -> dict[str, Any]:
    """`row` with its system messages and only the last `n` turns (a turn starts at a user message)."""
    key = "messages" if "messages" in row else "conversations" if "conversations" in row else None
    if key is None:
        return row
    messages = row[key]
    role = "role" if key == "messages" else "from"
    users = [i for i, m in enumerate(messages) if m.get(role) in ("user", "human")]
    if len(users) <= n:
        return row
    cut = users[-n]
    kept = [m for m in messages[:cut] if m.get(role) == "system"] + messages[cut:]
    return {**row, key: kept}


def emit_stats(stats: Stats, dropped: Counter[str]) -> None:
    warn(
        f"stats: {stats.rows} rows, {stats.messages} messages, ~{stats.tokens} tokens (estimated at "
        f"{CHARS_PER_TOKEN} characters a token), {stats.tool_calls} tool calls"
    )
    for reason, n in sorted(dropped.items()):
        warn(f"stats: dropped {n}: {reason}")
