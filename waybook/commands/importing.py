"""`waybook import FORMAT PATH -o OUT`: turn another agent's session file into a waybook journal.

Formats: `pi` (Pi session files), `claude-code` (Claude Code transcripts; the sub-agent transcripts found
beside a session become journals of their own, next to OUT, linked from the session), `codex` (Codex CLI
rollouts). Every import is validated in full before one atomic write per journal, and reports how every
source line was used (`--json` prints the report).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from waybook.codecs.claude_code import Anchor, import_claude_code, journal_id_for, subagent_anchor
from waybook.codecs.codex import import_codex
from waybook.codecs.foreign import ImportReport
from waybook.codecs.langgraph import import_langgraph
from waybook.codecs.langgraph_db import read_thread
from waybook.codecs.openai_agents import import_openai_agents
from waybook.codecs.openai_agents_db import read_session
from waybook.codecs.pi import import_pi
from waybook.commands.common import OK, UsageError, emit_json, guarded, warn
from waybook.journal import GENESIS, InMemoryJournal, NewRecord
from waybook.journal.fileio import create_atomically

FORMATS = ("pi", "claude-code", "codex", "openai-agents", "langgraph")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "import",
        help="import another agent's session (Pi, Claude Code, Codex, OpenAI Agents, LangGraph)",
        description=(
            "Import a Pi session file (versions 1-3), a Claude Code transcript, a Codex CLI rollout, an "
            "OpenAI Agents SDK session database (SQLiteSession, or AdvancedSQLiteSession with its "
            "branches) or a LangGraph SqliteSaver thread into a new JSONL journal. Branches the source "
            "keeps implicit become explicit leaf moves. Lines that do not parse are refused with their "
            "line numbers unless --lenient skips them. Each journal is validated in full before one "
            "atomic write. A Claude Code session's sub-agent transcripts (SESSION/subagents/agent-*.jsonl, "
            "or agent-*.jsonl beside it) become journals named <session>.agent-<id>.jsonl next to OUT, "
            "linked from the tool call that started them."
        ),
        epilog=(
            "Example: waybook import pi ~/.pi/agent/sessions/x.jsonl -o x.waybook.jsonl\n"
            "Example: waybook import claude-code ~/.claude/projects/p/SESSION.jsonl -o s.jsonl --json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", choices=FORMATS, help="the format of the file")
    parser.add_argument("path", type=Path, metavar="PATH")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, metavar="OUT", help="the new journal file"
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip lines that do not parse, and say how many"
    )
    parser.add_argument("--json", action="store_true", help="print the import report as JSON")
    parser.add_argument(
        "--session",
        metavar="ID",
        help="openai-agents: the session to import, when the database holds several",
    )
    parser.add_argument(
        "--thread", metavar="ID", help="langgraph: the thread to import, when the database holds several"
    )
    parser.set_defaults(run=guarded(run))


def run(args: argparse.Namespace) -> int:
    if not args.path.is_file():
        msg = f"{args.path}: no such file"
        raise UsageError(msg)
    if args.source == "openai-agents":
        session_id, rows, branches = read_session(args.path, args.session)
        agents = import_openai_agents(session_id, rows, branches, lenient=args.lenient)
        _write(args.output, agents.records)
        what = f"OpenAI Agents session {session_id!r}"
        _say(args, args.output, len(agents.records), what, agents.report, agents.report.skipped)
        return OK
    if args.source == "langgraph":
        thread_id, checkpoints = read_thread(args.path, args.thread)
        graph = import_langgraph(thread_id, checkpoints)
        _write(args.output, graph.records)
        what = f"LangGraph thread {thread_id!r} ({len(checkpoints)} checkpoints)"
        _say(args, args.output, len(graph.records), what, graph.report, ())
        return OK
    data = args.path.read_bytes()
    if args.source == "pi":
        imported = import_pi(data, lenient=args.lenient)
        _write(args.output, imported.records)
        _say(
            args,
            args.output,
            len(imported.records),
            f"a Pi v{imported.version} session",
            None,
            imported.skipped,
        )
        return OK
    if args.source == "codex":
        codex = import_codex(data, lenient=args.lenient)
        _write(args.output, codex.records)
        _say(args, args.output, len(codex.records), "a Codex rollout", codex.report, codex.report.skipped)
        return OK
    return _claude_code(args, data)


def _claude_code(args: argparse.Namespace, data: bytes) -> int:
    agents = _subagent_files(args.path)
    main = import_claude_code(data, lenient=args.lenient, links=_anchors(data, agents, args.path))
    outputs: list[tuple[Path, Sequence[NewRecord], ImportReport]] = [(args.output, main.records, main.report)]
    for agent_path in agents:
        sub = import_claude_code(agent_path.read_bytes(), lenient=args.lenient)
        outputs.append((args.output.parent / f"{sub.journal}.jsonl", sub.records, sub.report))
    taken = [str(path) for path, _, _ in outputs if path.exists()]
    if taken:
        msg = f"{', '.join(taken)}: already exist(s); choose a new file for the journal; nothing was written"
        raise UsageError(msg)
    for path, records, _ in outputs:
        _write(path, records)
    if args.json:
        emit_json([{"journal": str(path), **report.as_json()} for path, _, report in outputs])
        return OK
    for path, records, report in outputs:
        _say(args, path, len(records), "a Claude Code transcript", report, report.skipped)
    return OK


def _subagent_files(session: Path) -> list[Path]:
    """The sub-agent transcripts of a session: SESSION/subagents/agent-*.jsonl, then agent-*.jsonl beside
    it that name the same session (the older layout)."""
    found = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))
    if session.name.startswith("agent-"):
        return found
    session_id = _session_id(session.read_bytes())
    beside = [
        p for p in sorted(session.parent.glob("agent-*.jsonl")) if _session_id(p.read_bytes()) == session_id
    ]
    return found + [p for p in beside if p not in found]


def _session_id(data: bytes) -> str | None:
    for line in data.splitlines()[:50]:
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
                return str(value["sessionId"])
    return None


def _anchors(session: bytes, agents: list[Path], path: Path) -> dict[str, Anchor]:
    anchors = {}
    session_id = _session_id(session) or path.stem
    for agent_path in agents:
        agent_data = agent_path.read_bytes()
        anchor = subagent_anchor(session, agent_data)
        agent_id = agent_path.stem.removeprefix("agent-")
        if anchor is not None:
            anchors[journal_id_for(session_id, agent_id)] = anchor
    return anchors


def _write(output: Path, records: Sequence[NewRecord]) -> None:
    staging = InMemoryJournal(str(output))
    staging.append(list(records), expected=GENESIS)  # every rule is checked before any byte is written
    if not create_atomically(output, b"".join(line + b"\n" for line in staging.read_lines())):
        msg = f"{output}: already exists; choose a new file for the journal; nothing was written"
        raise UsageError(msg)


def _say(
    args: argparse.Namespace,
    output: Path,
    count: int,
    what: str,
    report: ImportReport | None,
    skipped: Sequence[tuple[int, str]],
) -> None:
    if args.json and report is not None:
        emit_json({"journal": str(output), **report.as_json()})
        return
    if args.json:
        emit_json({"journal": str(output), "records": count, "skipped": len(skipped)})
        return
    warn(f"imported {count} records from {what} into {output}")
    if report is not None:
        warn(
            f"{report.lines} source lines: {report.mapped} mapped, {report.kept_verbatim} kept verbatim, "
            f"{len(report.skipped)} skipped"
        )
    if skipped:
        lines = ", ".join(str(n) for n, _ in skipped[:10])
        warn(f"skipped {len(skipped)} unparseable lines (--lenient): {lines}")
