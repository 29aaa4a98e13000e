"""`waybook show PATH [--leaf ID] [--at SEQ] [--context]`: show a branch's entries, or what the model saw.

Show the entries of one root-to-leaf path (default: the active leaf), or with --context the messages the model
sees at that leaf after compaction and exclusions.

Example: waybook show session.jsonl --leaf a1b2c3 --context
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from typing import Any

from waybook.codecs import canonical_json
from waybook.commands.common import emit_json, open_journal, replay_with_progress, seq_arg, short_kind
from waybook.commands.context_text import ARGUMENT_CHARS, block_text, write_context
from waybook.commands.exits import warn
from waybook.commands.ids import check_at, resolve_id
from waybook.commands.journal_files import damage_status
from waybook.commands.pager import paged
from waybook.commands.progress import Phases
from waybook.commands.provenance import describe, memory_used, turn_memory
from waybook.commands.subcommand import add_journal_command, add_json_option
from waybook.commands.terminal import visible
from waybook.model import (
    AssistantMessage,
    Compaction,
    ContextExclusion,
    CustomEntry,
    MemoryPinMoved,
    MemoryUsed,
    Record,
    SubagentLink,
    plain_text,
)
from waybook.projections import (
    LinkRef,
    TreeProjection,
    context_at,
    harness_counts,
    harness_kind,
    is_harness,
    subagent_links,
    trajectory,
)


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "show", __doc__)
    parser.add_argument(
        "--leaf",
        metavar="ID",
        help="the leaf (or any node) to show, or a unique prefix of its id; default the active leaf",
    )
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="as the session was at this seq")
    parser.add_argument("--context", action="store_true", help="show the model context instead of the path")
    add_json_option(parser, "machine-readable output")
    parser.add_argument(
        "--no-pager",
        action="store_true",
        help="write to the terminal directly (on a terminal the output goes through $PAGER, else less)",
    )
    parser.add_argument(
        "--harness",
        action="store_true",
        help="also show harness entries (Claude Code's progress lines, hooks and caveats, Codex's events, "
        "LangGraph's checkpoints, ...); by default they are hidden and counted. --json shows every entry, "
        "each marked with its harness kind",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with open_journal(args.path, args.store) as journal:
        check_at(args.at, journal.head().seq, path=args.path)
        hidden: Counter[str] = Counter()  # stays empty when the reader quits the pager before the end
        with paged(enabled=not args.no_pager):
            hidden = _show(args, journal)
        _say_hidden(hidden)  # after the pager: on the terminal under the output, not under the pager's screen
    return damage_status(journal)


def _show(args: argparse.Namespace, journal: Any) -> Counter[str]:
    """Writes the path or the context; returns the harness entries it left out, by kind."""
    with Phases(journal.head().seq if args.at is None else args.at) as phases:
        tree = replay_with_progress(TreeProjection(), journal, at=args.at, phases=phases)
        leaf = None if args.leaf is None else resolve_id(tree, args.leaf, what="--leaf", path=args.path)
        if args.context:
            messages = context_at(journal, tree, leaf)
            if args.json:
                emit_json(
                    [
                        _message_json(m.role, m.source, m.content) | {"harness": harness_kind(m.record.body)}
                        for m in messages
                    ]
                )
                return Counter()
            shown = messages if args.harness else [m for m in messages if not is_harness(m.record.body)]
            write_context(shown)
            return harness_counts(m.record.body for m in messages if m not in shown)
        phases.start("reading the path")
        path = trajectory(journal, tree, leaf)
        noted = [  # one more pass over the journal for what `show` prints beside the path
            r
            for r in journal.read(limit=args.at)
            if isinstance(r.body, MemoryPinMoved | MemoryUsed | SubagentLink)
        ]
        pins = canonical_pins(noted)
        used = memory_used(noted)
        links: dict[str, list[LinkRef]] = {}
        for link in subagent_links(noted):
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
                            "harness": harness_kind(r.body),
                            "at": r.at,
                            "body": json.loads(canonical_json(r.body)),
                            **({"erased": r.erased.by} if r.erased is not None else {}),
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
            return Counter()
        records = path.records
        if not args.harness:
            records = tuple(r for r in path.records if not is_harness(r.body))
        phases.start("writing", total=len(records))
        _write_text(records, pins, used, links, phases)
        return harness_counts(r.body for r in path.records if is_harness(r.body) and not args.harness)


def _say_hidden(hidden: Counter[str]) -> None:
    """The note under a listing that left harness entries out: how many, of which kinds, and the flag."""
    if hidden:
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in hidden.most_common())
        warn(f"{sum(hidden.values()):,} harness entries hidden ({kinds}); --harness shows them")


BOLD, DIM, PLAIN = "\x1b[1m", "\x1b[2m", "\x1b[0m"
CHUNK = 2048


def _write_text(
    records: tuple[Record, ...],
    pins: list[tuple[int, dict[str, Any]]],
    used: Any,
    links: dict[str, list[LinkRef]],
    phases: Phases,
) -> None:
    """The path as text, written straight to stdout in chunks (Rich per record costs 10x more).

    Session text goes through `visible`, so it never reaches a terminal raw; styles only on a terminal.
    """
    styled = sys.stdout.isatty()
    bold, dim, plain = (BOLD, DIM, PLAIN) if styled else ("", "", "")
    out: list[str] = []
    shown_pin: dict[str, Any] | None = None
    for n, record in enumerate(records, start=1):
        pin = pin_at(pins, record.seq)
        if pin != shown_pin and pin is not None:
            out.append(
                f"{dim}canonical memory {visible(pin['canonical'])} pinned at seq {pin['seq']}{plain}\n"
            )
        shown_pin = pin
        out.append(f"{bold}{record.seq} {short_kind(record.kind)}{plain} {record.id}\n")
        if (memory := turn_memory(used, records, n - 1)) is not None:
            out.append(f"{dim}{visible(describe(memory))}{plain}\n")
        out.append(_body_text(record).removesuffix("\n"))
        for link in links.get(record.id, []):
            via = f" (call {link.call_id})" if link.call_id else ""
            out.append(visible(f"  ↳ sub-agent session {link.journal}{via}", one_line=True) + "\n")
        out.append("\n")
        if n % CHUNK == 0:
            sys.stdout.write("".join(out))
            out = []
            phases.advance(n)
    sys.stdout.write("".join(out))


def _body_text(record: Record) -> str:
    body = record.body
    if isinstance(body, Compaction):
        text = f"summary: {body.summary}"
    elif isinstance(body, ContextExclusion):
        text = f"excludes {body.target}" + (f": {body.reason}" if body.reason else "")
    elif isinstance(body, CustomEntry) and not body.content:
        text = f"{body.type} {json.dumps(body.data, sort_keys=True, ensure_ascii=False)}"
    elif isinstance(body, AssistantMessage):  # thinking as a marker, each call on one shortened line
        shown = (block_text(block, ARGUMENT_CHARS) for block in body.content)
        return "".join(line + "\n" for line in shown if line) + "\n"
    else:
        text = plain_text(getattr(body, "content", ()))
    lines = [visible(text)] if text else []
    return "".join(line + "\n" for line in lines) + "\n"


def canonical_pins(records: Iterable[Record]) -> list[tuple[int, dict[str, Any]]]:
    """(seq, pin) for every canonical-memory pin move among `records`, in order."""
    pins = []
    for record in records:
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
