"""What a reader is shown where a record's content was erased: a placeholder naming the erasure.

An erased record decodes as its kind with empty content (docs/erasure.md). Shown that way, a hole looks
like a message that said nothing, and a tool call whose result was erased looks unanswered. Every
reader (projections, `show`, the viewer, search, exports, contexts) shows instead the text of
`erased_placeholder`, which names the erasure record's seq and its reason:
`[erased by #41: GDPR request]`. These functions are pure: the reasons are handed in, read by the
caller from the erasure records (`erasure_reasons`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import msgspec

from waybook._visible import visible
from waybook.model._records import (
    AssistantMessage,
    Compaction,
    CustomEntry,
    Erasure,
    Record,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

ERASED_TOOL_NAME = "erased"
"""The tool name a rebuilt call carries when its result does not name its tool either."""


REASON_SHOWN: Final = 200
"""The most characters of an erasure's reason its placeholder shows (cut with `…`): the placeholder
stands in every context sent to a model and every export, once per erased record; the erasure record
keeps the whole reason."""


def erased_placeholder(by: int, reason: str | None) -> str:
    """The text shown in place of content that erasure `by` (its record's seq) removed, with its reason
    on one line (None when the erasure record is not at hand, as at a seq before it).

    The reason is the erasing caller's text inside waybook's own: its whitespace is folded, it is cut to
    `REASON_SHOWN` characters, and each control or bidirectional control character in it is shown as a
    `\\xNN` / `\\uNNNN` escape, so it can neither reorder the placeholder's closing bracket and what
    follows it on a page or in a context, nor drive a terminal."""
    said = " ".join(reason.split()) if reason else ""
    if len(said) > REASON_SHOWN:
        said = said[: REASON_SHOWN - 1] + "…"
    said = visible(said, one_line=True)
    return f"[erased by #{by}: {said}]" if said else f"[erased by #{by}]"


def erasure_reasons(records: Iterable[Record]) -> dict[int, str]:
    """The reason of each erasure record among `records`, by its seq."""
    return {r.seq: r.body.reason for r in records if isinstance(r.body, Erasure)}


def placeholder_record(record: Record, reasons: Mapping[int, str]) -> Record:
    """`record` with its erased content replaced by the placeholder (a text block; a compaction's
    summary), or `record` itself when nothing of it was erased. The envelope, `erased` and the digest
    stay: the result is for showing, never for appending or proving. An annotation keeps its empty
    `data` (its readers parse it; nothing of it is shown)."""
    erased = record.erased
    if erased is None:
        return record
    shown = erased_placeholder(erased.by, reasons.get(erased.by))
    body = record.body
    if isinstance(body, UserMessage | SystemMessage | AssistantMessage | ToolResult | CustomEntry):
        body = msgspec.structs.replace(body, content=(TextBlock(text=shown),))
    elif isinstance(body, Compaction):
        body = msgspec.structs.replace(body, summary=shown)
    else:
        return record
    return msgspec.structs.replace(record, body=body)


def placeholder_records(records: Sequence[Record], reasons: Mapping[int, str]) -> list[Record]:
    """`records` (a path or a context, in order) each through `placeholder_record`, keeping every tool
    result paired with its call, once.

    An erased assistant message loses its tool calls with its text, but each result that answers one
    keeps its `call_id` and `tool_name`. A turn is a run of assistant messages (one message per call,
    as Claude Code and the OpenAI Agents SDK record parallel calls, or one with them all); the results
    right after the run (before the next other record) that answer no call the run still holds give
    back one call each, with no arguments, after the placeholder text: in order, one to each erased
    message of the run and the rest to its last (so a turn recorded one message per call gets each call
    back where it was when its results came in the calls' order). So no result is orphaned, no call is
    made twice, and no neighbour's content is dropped."""
    out = [placeholder_record(record, reasons) for record in records]
    start = 0
    while start < len(records):
        end = start
        while end < len(records) and isinstance(records[end].body, AssistantMessage):
            end += 1
        if end == start:
            start += 1
            continue
        erased = [k for k in range(start, end) if records[k].erased is not None]
        calls = _rebuilt_calls(records[start:end], records[end:]) if erased else []
        for n, k in enumerate(erased):
            given = calls[n:] if n == len(erased) - 1 else calls[n : n + 1]
            if given:
                shown = out[k].body
                assert isinstance(shown, AssistantMessage)
                out[k] = msgspec.structs.replace(
                    out[k], body=msgspec.structs.replace(shown, content=(*shown.content, *given))
                )
        start = end
    return out


def _rebuilt_calls(turn: Sequence[Record], after: Sequence[Record]) -> list[ToolCallBlock]:
    """A call for each result right after `turn` (its assistant messages) that answers none it holds."""
    made = {
        block.call_id
        for record in turn
        for block in record.body.content  # type: ignore[union-attr]
        if isinstance(block, ToolCallBlock)
    }
    calls: list[ToolCallBlock] = []
    for later in after:
        result = later.body
        if not isinstance(result, ToolResult):
            break
        if result.call_id not in made:
            made.add(result.call_id)
            calls.append(ToolCallBlock(call_id=result.call_id, name=result.tool_name or ERASED_TOOL_NAME))
    return calls
