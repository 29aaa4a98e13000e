"""Reminders: a short block for the next prompt about the memory's condition, as a pure projection.

`reminders(memory_journal, sessions=...)` folds the memory journal (its files and its reflection state)
and the session journals (oldest first) and names, in this order:

- notes without a front-matter description (the index cannot say what they are for);
- notes near the file limit, and memory near its total-bytes or file-count limit (`near=0.9` of it);
- notes not touched in the last `stale_after` sessions: no revision of the note was written by a tool
  call that appears (as a tool result's call id) in one of those sessions;
- a pending or active reflection run.

It reads records up to the heads given (`at=` the memory journal's seq; each session journal's head
as it is read) and nothing else: no clock, no record timestamps. The same journal positions always give
the same bytes, and the result names those positions and the SHA-256 of its text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final, Literal

import attrs

from waybook.journal import SessionJournal, front_matter
from waybook.memory._errors import RequestError
from waybook.memory.tools.reflection import scheduler_state
from waybook.memory.working import DEFAULT_LIMITS, MemoryProjection, MemoryState
from waybook.model import Head, Header, ToolResult
from waybook.projections import replay

Kind = Literal[
    "no_description", "near_file_limit", "near_total_limit", "near_file_count", "stale", "reflection"
]
MAX_ITEMS: Final = 12


@attrs.frozen
class Reminder:
    kind: Kind
    path: str | None
    line: str


@attrs.frozen
class Reminders:
    """The reminder block: its lines, its text (empty when there is nothing to remind), the positions it
    was derived from (the memory journal's head and each session journal's, by header id) and the
    SHA-256 of the text."""

    items: tuple[Reminder, ...]
    text: str
    memory: Head
    sessions: tuple[tuple[str, int], ...]
    sha256: str


def reminders(
    memory: SessionJournal,
    *,
    sessions: Sequence[SessionJournal] = (),
    at: int | None = None,
    stale_after: int = 5,
    near: float = 0.9,
    max_items: int = MAX_ITEMS,
) -> Reminders:
    """The reminder block for the next prompt of `memory` (default: at its head)."""
    if type(stale_after) is not int or stale_after < 1:
        msg = f"stale_after is a number of sessions (1 or more), not {stale_after!r}"
        raise RequestError(msg)
    if not isinstance(near, int | float) or not 0 < near <= 1:
        msg = f"near is a fraction of a limit in (0, 1], not {near!r}"
        raise RequestError(msg)
    if type(max_items) is not int or max_items < 1:
        msg = f"max_items must be a whole number of at least 1, not {max_items!r}"
        raise RequestError(msg)
    state = replay(MemoryProjection(), memory, at=at)
    if at is not None and state.seq != at:
        msg = f"{memory.name} has no seq {at} (its head is {state.seq})"
        raise RequestError(msg)
    reflection = scheduler_state(memory, (), at=state.seq)
    calls, positions = _session_calls(sessions)
    items = [
        *_undescribed(state),
        *_near_limits(state, near),
        *_stale(state, calls, stale_after),
    ]
    if reflection.active is not None:
        run = reflection.active
        items.append(Reminder("reflection", None, f"A reflection run ({run.trigger}) is under way."))
    elif reflection.pending is not None:
        why = f": {reflection.pending.reason}" if reflection.pending.reason else ""
        items.append(
            Reminder("reflection", None, f"A reflection ({reflection.pending.trigger}{why}) is pending.")
        )
    text = _render(state, items, max_items)
    return Reminders(
        items=tuple(items),
        text=text,
        memory=Head(state.seq, state.digest),
        sessions=positions,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


def _undescribed(state: MemoryState) -> list[Reminder]:
    return [
        Reminder("no_description", path, f"{path} has no description: add one (update_description).")
        for path in sorted(state.files)
        if not (front_matter(state.files[path].text).description or "").strip()
    ]


def _near_limits(state: MemoryState, near: float) -> list[Reminder]:
    limits = state.limits or DEFAULT_LIMITS
    found = []
    for path in sorted(state.files):
        size = state.files[path].size
        if size >= near * limits.max_file_bytes:
            found.append(
                Reminder(
                    "near_file_limit",
                    path,
                    f"{path} is {size} of {limits.max_file_bytes} bytes: condense or split it.",
                )
            )
    if state.total_bytes >= near * limits.max_total_bytes:
        total = limits.max_total_bytes
        line = f"Memory holds {state.total_bytes} of {total} bytes: condense or delete notes."
        found.append(Reminder("near_total_limit", None, line))
    if len(state.files) >= near * limits.max_files:
        line = f"Memory holds {len(state.files)} of {limits.max_files} files: merge or delete notes."
        found.append(Reminder("near_file_count", None, line))
    return found


def _stale(state: MemoryState, calls: list[frozenset[str]], stale_after: int) -> list[Reminder]:
    if len(calls) < stale_after:
        return []  # too few sessions to say
    recent = frozenset().union(*calls[-stale_after:])
    found = []
    for path in sorted(state.files):
        touched = any(r.call_id in recent for r in state.history.get(path, ()) if r.call_id)
        if not touched:
            line = f"{path} was not touched in the last {stale_after} sessions: check it still holds."
            found.append(Reminder("stale", path, line))
    return found


def _session_calls(
    sessions: Sequence[SessionJournal],
) -> tuple[list[frozenset[str]], tuple[tuple[str, int], ...]]:
    """Per session (in the order given) the tool-call ids of its tool results, and each one's position."""
    calls, positions = [], []
    for journal in sessions:
        name, seq, ids = journal.name, 0, set()
        for record in journal.read():
            body = record.body
            if isinstance(body, Header):
                name = body.journal
            elif isinstance(body, ToolResult):
                ids.add(body.call_id)
            seq = record.seq
        calls.append(frozenset(ids))
        positions.append((name, seq))
    return calls, tuple(positions)


def _render(state: MemoryState, items: list[Reminder], max_items: int) -> str:
    if not items:
        return ""
    lines = [f"Memory reminders (memory at seq {state.seq}):"]
    lines += [f"- {item.line}" for item in items[:max_items]]
    if len(items) > max_items:
        lines.append(f"- … and {len(items) - max_items} more.")
    return "\n".join(lines) + "\n"
