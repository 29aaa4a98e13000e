"""`waybook show PATH [--leaf ID] [--at SEQ] [--context]`: a trajectory, or the model context at a leaf."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.markup import escape

from waybook.codecs import canonical_json
from waybook.commands.common import (
    OK,
    UsageError,
    add_store_option,
    emit_json,
    guarded,
    open_journal,
    replay_with_progress,
    seq_arg,
    short_kind,
    stdout,
)
from waybook.commands.provenance import describe, memory_used, turn_memory
from waybook.journal import plain_text
from waybook.journal.records import AssistantMessage, MemoryPinMoved
from waybook.projections import TreeProjection, context_at, trajectory
from waybook.projections.links import LinkRef, subagent_links


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "show",
        help="show a branch's entries, or what the model saw",
        description=(
            "Show the entries of one root-to-leaf path (default: the active leaf), or with --context the "
            "messages the model sees at that leaf after compaction and exclusions."
        ),
        epilog="Example: waybook show session.jsonl --leaf a1b2c3 --context",
    )
    parser.add_argument("path", type=Path, metavar="PATH")
    add_store_option(parser)
    parser.add_argument(
        "--leaf", metavar="ID", help="the leaf (or any node) to show; default the active leaf"
    )
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="as the session was at this seq")
    parser.add_argument("--context", action="store_true", help="show the model context instead of the path")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=guarded(run))


def run(args: argparse.Namespace) -> int:
    with open_journal(args.path, args.store) as journal:
        tree = replay_with_progress(TreeProjection(), journal, at=args.at)
        if args.leaf is not None and args.leaf not in tree.index:
            msg = f"{args.leaf!r} is not a node of {args.path}" + (f" at seq {args.at}" if args.at else "")
            raise UsageError(msg)
        console = stdout()
        if args.context:
            messages = context_at(journal, tree, args.leaf)
            if args.json:
                emit_json([_message_json(m.role, m.source, m.content) for m in messages])
                return OK
            for message in messages:
                console.print(f"[bold]{message.role}[/bold] ({message.source})")
                console.print(escape(plain_text(message.content)) or "[dim](no text)[/dim]", markup=True)
                console.print()
            return OK
        path = trajectory(journal, tree, args.leaf)
        pins = canonical_pins(journal, args.at)
        used = memory_used(journal, args.at)
        links: dict[str, list[LinkRef]] = {}
        for link in subagent_links(journal.read(limit=args.at)):
            links.setdefault(link.node, []).append(link)
        if args.json:
            emit_json(
                {
                    "leaf": path.leaf,
                    "active": path.active,
                    "records": [
                        {
                            "seq": r.seq,
                            "id": r.id,
                            "kind": r.kind,
                            "at": r.at,
                            "body": json.loads(canonical_json(r.body)),
                            "canonical_pin": pin_at(pins, r.seq),
                            "memory_used": turn_memory(used, path.records, i),
                            "subagents": [
                                {
                                    "journal": k.journal,
                                    "call_id": k.call_id,
                                    "agent": k.agent,
                                    "reason": k.reason,
                                }
                                for k in links.get(r.id, [])
                            ],
                        }
                        for i, r in enumerate(path.records)
                    ],
                }
            )
            return OK
        shown_pin: dict[str, Any] | None = None
        for i, record in enumerate(path.records):
            pin = pin_at(pins, record.seq)
            if pin != shown_pin and pin is not None:
                console.print(
                    f"[dim]canonical memory {escape(pin['canonical'])} pinned at seq {pin['seq']}[/dim]"
                )
            shown_pin = pin
            body = record.body
            content = getattr(body, "content", ())
            text = plain_text(content)
            calls = body.tool_calls if isinstance(body, AssistantMessage) else ()
            console.print(f"[bold]{record.seq} {short_kind(record.kind)}[/bold] {record.id}")
            if (memory := turn_memory(used, path.records, i)) is not None:
                console.print(f"[dim]{escape(describe(memory))}[/dim]")
            if text:
                console.print(escape(text))
            for call in calls:
                console.print(
                    f"  -> {escape(call.name)}({escape(json.dumps(call.arguments, sort_keys=True))})"
                )
            for link in links.get(record.id, []):
                via = f" (call {link.call_id})" if link.call_id else ""
                console.print(f"  ↳ sub-agent session {escape(link.journal)}{escape(via)}")
            console.print()
    return OK


def canonical_pins(journal: Any, at: int | None) -> list[tuple[int, dict[str, Any]]]:
    """(seq, pin) for every canonical-memory pin move recorded in the session, in order."""
    pins = []
    for record in journal.read(limit=at):
        if isinstance(record.body, MemoryPinMoved):
            body = record.body
            pin = {
                "canonical": body.canonical,
                "seq": body.new_seq,
                "digest": body.new_digest,
                "receipt": body.receipt,
            }
            pins.append((record.seq, pin))
    return pins


def pin_at(pins: list[tuple[int, dict[str, Any]]], seq: int) -> dict[str, Any] | None:
    """The canonical memory pin in force when the record at `seq` was written."""
    current = None
    for moved_at, pin in pins:
        if moved_at >= seq:
            break
        current = pin
    return current


def _message_json(role: str, source: str, content: Any) -> dict[str, Any]:
    return {"role": role, "source": source, "content": json.loads(canonical_json(content))}
