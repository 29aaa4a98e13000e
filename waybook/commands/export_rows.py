"""What `waybook export` does to rows on their way out: `--max-rows`, `--last-turns`, `--stats`, and a
progress bar (on a terminal, for exports of journals large enough to take a while)."""

from __future__ import annotations

import hashlib
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

    def __init__(self, max_rows: int | None, last_turns: int | None, *, dedupe: bool = False) -> None:
        self.max_rows = max_rows
        self.last_turns = last_turns
        self.deduper = PrefixDeduper() if dedupe else None
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
            yield self.deduper.row(row) if self.deduper is not None else row

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


class PrefixDeduper:
    """The `--dedupe-prefix` layout: each row gets an `id` (a digest of its messages); a row whose first
    messages are an earlier row's first K messages holds `"prefix": {"row": ID, "messages": K}` and only
    the messages after them. A reader rebuilds a row by taking K messages of the row it names (itself
    rebuilt first). Exact: a prefix is matched by a digest chained over each message's canonical JSON."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, int]] = {}  # chained digest -> (row id, messages)

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        messages = row.get("messages")
        if not isinstance(messages, list) or not messages:
            return row
        chain = []
        digest = ""
        for message in messages:
            text = json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            digest = hashlib.sha256((digest + text).encode()).hexdigest()
            chain.append(digest)
        row_id = chain[-1]
        shared = next(
            (
                (k, self._seen[chain[k - 1]])
                for k in range(len(chain) - 1, 0, -1)
                if chain[k - 1] in self._seen
            ),
            None,
        )
        for k, d in enumerate(chain, start=1):
            self._seen.setdefault(d, (row_id, k))
        if shared is None:
            return {"id": row_id, **row}
        k, (earlier, _) = shared
        return {**row, "id": row_id, "prefix": {"row": earlier, "messages": k}, "messages": messages[k:]}


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
