"""A session holding one secret in every field a record has, and its redacted export in every shape
(issue 43): message text (system, user, assistant), thinking, tool arguments (a value and a key), tool
call ids, tool names, tool outputs, custom entries shown to the model (their content and data), the
header's metadata (tool definitions and more), and a fork labelled chosen so preference rows exist."""

from __future__ import annotations

import json
from typing import Any, Final

from waybook.export.trajectories import Selection, TrainingOptions, TrajectoryExporter, encode_row
from waybook.journal import InMemoryJournal
from waybook.model import NewRecord, TextBlock, ToolCallBlock
from waybook.model._records import (
    Annotation,
    AssistantMessage,
    CustomEntry,
    Header,
    LeafMoved,
    SystemMessage,
    ThinkingBlock,
    ToolResult,
    UserMessage,
)

FIELDS: Final = (
    "header metadata",
    "system text",
    "user text",
    "assistant text",
    "thinking",
    "tool argument",
    "tool argument key",
    "tool call id",
    "tool name",
    "tool output",
    "custom content",
    "custom data",
)
AT: Final = "2026-01-01T00:00:00.000Z"


def session_holding(secret: str, *, fields: tuple[str, ...] = FIELDS) -> InMemoryJournal:
    """A journal whose records hold `secret` in each of `fields` (the others hold plain text)."""

    def put(field: str, plain: str = "plain") -> str:
        return secret if field in fields else plain

    tools = [
        {
            "name": "run",
            "description": f"Runs a command. {put('header metadata')}",
            "parameters": {
                "type": "object",
                "properties": {"cmd": {"type": "string", "default": put("header metadata")}},
            },
        }
    ]
    header = Header(journal="j", creator="test", metadata={"tools": tools, "note": put("header metadata")})
    call_id = f"call_{put('tool call id', '1')}"
    name = f"fn_{put('tool name', 'x')}"
    call = ToolCallBlock(
        call_id=call_id, name=name, arguments={"cmd": put("tool argument"), put("tool argument key", "k"): 1}
    )
    bodies: list[tuple[str, Any]] = [
        ("h", header),
        ("s", SystemMessage(parent=None, content=(TextBlock(text=f"system {put('system text')}"),))),
        ("u", UserMessage(parent="s", content=(TextBlock(text=f"please {put('user text')}"),))),
        (
            "a",
            AssistantMessage(
                parent="u",
                content=(
                    ThinkingBlock(thinking=f"think {put('thinking')}"),
                    TextBlock(text=f"answer {put('assistant text')}"),
                    call,
                ),
                stop_reason="tool_use",
            ),
        ),
        (
            "t",
            ToolResult(parent="a", call_id=call_id, content=(TextBlock(text=f"out {put('tool output')}"),)),
        ),
        (
            "c",
            CustomEntry(
                parent="t",
                type="test.note",
                data={"v": put("custom data")},
                in_context=True,
                content=(TextBlock(text=f"note {put('custom content')}"),),
            ),
        ),
        (
            "b1",
            AssistantMessage(
                parent="c",
                content=(
                    ThinkingBlock(thinking=put("thinking")),
                    TextBlock(text=f"no {put('assistant text')}"),
                ),
                stop_reason="end_turn",
            ),
        ),
        ("m", LeafMoved(from_leaf="b1", to_leaf="c", reason="retry")),
        (
            "b2",
            AssistantMessage(
                parent="c",
                content=(
                    ThinkingBlock(thinking=put("thinking")),
                    TextBlock(text=f"yes {put('assistant text')}"),
                ),
                stop_reason="end_turn",
            ),
        ),
        ("l", Annotation(target="b2", type="waybook.preference", data={"label": "chosen"})),
    ]
    journal = InMemoryJournal("j")
    journal.append([NewRecord(id=i, at=AT, body=b) for i, b in bodies], expected=journal.head())
    return journal


def export_shapes(journal: InMemoryJournal) -> dict[str, str]:
    """Every export shape of `journal`, redacted, with provenance, as the text written (JSONL)."""
    out: dict[str, str] = {}
    tagged = TrainingOptions(thinking="tag", aborted="keep", unanswered="stub")
    field = TrainingOptions(thinking="field", aborted="keep", unanswered="stub")

    def run(shape: str, options: TrainingOptions, rows: Any) -> None:
        out[shape] = "".join(encode_row(row).decode() + "\n" for row in rows)

    def exporter(options: TrainingOptions) -> TrajectoryExporter:
        return TrajectoryExporter(journal, redact=True, provenance=True, options=options)

    for fmt, options in (("openai", tagged), ("sharegpt", tagged), ("trl-sft", field)):
        run(fmt, options, exporter(options).rows(fmt, Selection("all")))  # type: ignore[arg-type]
    run("openai --turns", tagged, exporter(tagged).turns(Selection("all")))
    run("trl-sft --turns", field, exporter(field).turns(Selection("all"), "trl-sft"))
    for fmt in ("openai", "openai-dpo", "trl-dpo", "trl-kto"):
        run(f"{fmt} --pairs", field, exporter(field).pairs(fmt))  # type: ignore[arg-type]
    return out


def leaks(journal: InMemoryJournal, core: str) -> dict[str, list[str]]:
    """The export shapes whose output holds `core` (also JSON-escaped), and the rows that do."""
    escaped = json.dumps(core)[1:-1]
    found: dict[str, list[str]] = {}
    for shape, text in export_shapes(journal).items():
        assert text, f"{shape} wrote no row"
        rows = [row for row in text.splitlines() if core in row or escaped in row]
        if rows:
            found[shape] = rows
    return found
