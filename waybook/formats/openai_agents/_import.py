"""OpenAI Agents SDK sessions (`SQLiteSession`, `AdvancedSQLiteSession`), imported as waybook records.

The SDK stores one row per Responses item (`agent_messages.message_data`), in order by row id. The
advanced session adds `message_structure`: each branch lists the message rows it holds, in
`sequence_number` order; a branch made from turn N shares the rows of the turns before N with the
branch it came from. Import maps the items as `waybook.formats._responses` does (a run of model items is
one assistant entry; outputs are tool results), writes the `main` branch first, and every other branch
as a leaf move back to the last message it shares followed by its own messages. The SDK does not store
which branch is current, so the import ends on `main` and says so in the report. Ids are `oa-<row id>`.

This module maps rows; reading them from the database is the command's job (`waybook import
openai-agents DB -o OUT --session ID`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from waybook.formats._foreign import (
    FALLBACK_TIMESTAMP,
    MAX_DEPTH,
    ForeignFormatError,
    ImportReport,
    LineTally,
    depth,
    stable_id,
)
from waybook.formats._responses import call_names, is_model_item, item_body, turn_body
from waybook.model import Header, LeafMoved, NewRecord

SOURCE: Final = "openai_agents"
MAIN: Final = "main"


@attrs.frozen
class Row:
    """One `agent_messages` row: its id, its item's JSON text and when it was written."""

    id: int
    data: str
    created_at: str | None = None


@attrs.frozen
class OpenAIAgentsImport:
    records: tuple[NewRecord, ...]
    report: ImportReport
    leaves: Mapping[str, str | None]
    """branch id -> the node its messages end at (where `get_items` on that branch resumes)."""


def import_openai_agents(
    session_id: str,
    rows: Sequence[Row],
    branches: Mapping[str, Sequence[int]] | None = None,
    *,
    lenient: bool = False,
    name: str | None = None,
) -> OpenAIAgentsImport:
    """Map one session's rows (and, for the advanced session, its branches: branch id -> row ids in
    sequence order) to the records of a new journal. `name` names the journal in its header instead of
    the session's id (which its metadata keeps)."""
    items: dict[int, dict[str, Any]] = {}
    skipped: list[tuple[int, str]] = []
    for row in rows:
        if not isinstance(row.data, (str, bytes)):
            what = "NULL" if row.data is None else type(row.data).__name__
            skipped.append((row.id, f"message_data is {what}, not JSON text"))
            continue
        try:
            value = json.loads(row.data)
        except (ValueError, RecursionError) as exc:
            skipped.append((row.id, f"not JSON ({str(exc)[:80] or type(exc).__name__})"))
            continue
        if not isinstance(value, dict):
            skipped.append((row.id, "not a Responses item (a JSON object)"))
            continue
        if depth(value) > MAX_DEPTH:
            skipped.append((row.id, f"nested deeper than {MAX_DEPTH} levels"))
            continue
        items[row.id] = value
    if skipped and not lenient:
        raise ForeignFormatError(SOURCE, skipped, unit="row")
    order = {MAIN: [r.id for r in rows]} if not branches else {b: list(ids) for b, ids in branches.items()}
    if MAIN not in order:
        order = {MAIN: [], **order}
    at = {row.id: _timestamp(row.created_at) for row in rows}
    journal = stable_id(session_id) if session_id else "openai-agents-session"
    header = NewRecord(
        id=journal,
        at=at[rows[0].id] if rows else FALLBACK_TIMESTAMP,
        body=Header(
            journal=name or journal, creator="openai-agents", metadata={SOURCE: {"session_id": session_id}}
        ),
    )
    builder = _Builder(items, at)
    leaves: dict[str, str | None] = {}
    for branch in [MAIN, *sorted(b for b in order if b != MAIN)]:
        try:
            leaves[branch] = builder.branch(branch, [i for i in order[branch] if i in items])
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            problem = [(builder.row, f"{type(exc).__name__}: {exc}")]
            raise ForeignFormatError(SOURCE, problem, unit="row") from None
    if builder.leaf != leaves[MAIN]:
        move = LeafMoved(
            from_leaf=builder.leaf,
            to_leaf=leaves[MAIN],
            reason="openai-agents: back to the main branch (the SDK does not store which branch is current)",
            actor="openai-agents",
        )
        builder.records.append(NewRecord(id="oa-main", at=builder.last_at, body=move))
        builder.inferred.append("the active branch: main (the SDK does not store the current branch)")
    for row_id in items:
        if row_id not in builder.node_of:
            builder.tally.kept(row_id)  # a row no branch lists: nothing to map it to, counted as kept
    report = builder.tally.report("openai-agents", len(rows), skipped, builder.inferred)
    return OpenAIAgentsImport(records=(header, *builder.records), report=report, leaves=leaves)


def _timestamp(value: str | None) -> str:
    """SQLite's CURRENT_TIMESTAMP (`2026-05-11 08:27:17`) as RFC 3339 UTC with milliseconds."""
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] in " T":
        return f"{value[:10]}T{value[11:19]}.000Z"
    return FALLBACK_TIMESTAMP


class _Builder:
    def __init__(self, items: Mapping[int, dict[str, Any]], at: Mapping[int, str]) -> None:
        self.items = items
        self.at = at
        self.last_at = FALLBACK_TIMESTAMP
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.leaf: str | None = None
        self.node_of: dict[int, str] = {}
        self.calls: dict[str, str] = {}
        self.row = 0  # the row being mapped, for a message naming it

    def branch(self, name: str, row_ids: list[int]) -> str | None:
        """Write a branch's messages after the last one it shares; return where it ends."""
        shared = 0
        while shared < len(row_ids) and row_ids[shared] in self.node_of:
            shared += 1
        start = self.node_of[row_ids[shared - 1]] if shared else None
        if row_ids[shared:] and start != self.leaf:
            reason = f"openai-agents: branch {name!r} continues from here"
            move = LeafMoved(from_leaf=self.leaf, to_leaf=start, reason=reason, actor="openai-agents")
            self.records.append(NewRecord(id=stable_id("oa-branch", name), at=self.last_at, body=move))
            self.leaf = start
        turn: list[int] = []
        for row_id in row_ids[shared:]:
            self.row = row_id
            item = self.items[row_id]
            if is_model_item(item):
                turn.append(row_id)
                continue
            self._turn(turn)
            turn = []
            name_of_call = self.calls.get(str(item.get("call_id")))
            self._node([row_id], item_body(item, self.leaf, SOURCE, name_of_call))
        self._turn(turn)
        return self.node_of[row_ids[-1]] if row_ids else start

    def _turn(self, row_ids: list[int]) -> None:
        if not row_ids:
            return
        items = [self.items[i] for i in row_ids]
        self.calls.update(call_names(items))
        body = turn_body(items, self.leaf, None, SOURCE, rows=row_ids)
        self.inferred.append(f"row {row_ids[0]}: stop reason {body.stop_reason!r} inferred")
        self._node(row_ids, body)

    def _node(self, row_ids: list[int], body: Any) -> None:
        node_id = f"oa-{row_ids[0]}"
        self.last_at = self.at.get(row_ids[0], self.last_at)
        self.records.append(NewRecord(id=node_id, at=self.last_at, body=body))
        for row_id in row_ids:
            self.node_of[row_id] = node_id
            self.tally.mapped(row_id)
        self.leaf = node_id
