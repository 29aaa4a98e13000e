"""`waybook import FORMAT PATH -o OUT`: turn another agent's session file into a waybook journal.

Formats: `pi` (Pi session files), `claude-code` (Claude Code transcripts; the sub-agent transcripts found
beside a session become journals of their own, next to OUT, linked from the session), `codex` (Codex CLI
rollouts). Every import is validated in full before one atomic write per journal, and reports how every
source line was used (`--json` prints the report). An import into a store (`--store`) keeps each image as
a blob, stored before the journal that references it (waybook._offload).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from waybook._offload import images_as_blobs, inline_known
from waybook.commands.common import emit_json
from waybook.commands.exits import OK, UsageError, warn
from waybook.commands.store_option import add_store_option, create_store, import_into_store
from waybook.commands.terminal import plural
from waybook.formats._foreign import ImportReport
from waybook.formats.claude_code._transcript import (
    Anchor,
    import_claude_code,
    journal_id_for,
    subagent_anchor,
)
from waybook.formats.codex import import_codex
from waybook.formats.langgraph._database import read_thread
from waybook.formats.langgraph._import import import_langgraph
from waybook.formats.openai_agents._database import read_session
from waybook.formats.openai_agents._import import import_openai_agents
from waybook.formats.pi._codec import import_pi
from waybook.journal import GENESIS, InMemoryJournal, JournalError, NewRecord
from waybook.journal._fileio import create_atomically
from waybook.stores._blobs import references

T = TypeVar("T")
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
    parser.add_argument(
        "path", type=Path, metavar="PATH", help="the session file (or, with --store, a folder of them)"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="OUT", help="the new journal file (with --store: its id)"
    )
    add_store_option(
        parser,
        ids="OUT",
        detail="; the store is created if missing, and PATH may be a folder of Claude Code or Codex sessions "
        "(one journal each, named by session)",
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
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.path.is_dir():
        return _folder(args)
    if not args.path.is_file():
        msg = f"{args.path}: no such file"
        raise UsageError(msg)
    if args.output is None:
        msg = "say where the journal goes: -o OUT (a new file, or with --store the new journal's id)"
        raise UsageError(msg)
    if args.source == "openai-agents":
        session_id, rows, branches = read_session(args.path, args.session)
        agents = import_openai_agents(session_id, rows, branches, lenient=args.lenient)
        _write(args, args.output, agents.records)
        what = f"OpenAI Agents session {session_id!r}"
        _say(args, args.output, len(agents.records), what, agents.report, agents.report.skipped)
        return OK
    if args.source == "langgraph":
        thread_id, checkpoints = read_thread(args.path, args.thread)
        graph = import_langgraph(thread_id, checkpoints)
        _write(args, args.output, graph.records)
        what = f"LangGraph thread {thread_id!r} ({len(checkpoints)} checkpoints)"
        _say(args, args.output, len(graph.records), what, graph.report, ())
        return OK
    data = args.path.read_bytes()
    if args.source == "pi":
        imported = import_pi(data, lenient=args.lenient)
        _write(args, args.output, imported.records, shown=imported.blobs)
        _say(
            args,
            args.output,
            len(imported.records),
            f"a Pi v{imported.version} session",
            None,
            imported.skipped,
        )
        if imported.joined and not args.json:
            lines = ", ".join(str(n) for n in imported.joined[:10])
            warn(
                f"{plural(len(imported.joined), 'line')} held two entries (a concurrent write); "
                f"imported both: line {lines}"
            )
        return OK
    if args.source == "codex":
        codex = import_codex(data, lenient=args.lenient)
        _write(args, args.output, codex.records)
        _say(args, args.output, len(codex.records), "a Codex rollout", codex.report, codex.report.skipped)
        return OK
    return _claude_code(args, data)


def _claude_code(args: argparse.Namespace, data: bytes) -> int:
    outputs = list(_claude_code_journals(args, args.path, data, str(args.output)))
    _write_all(args, outputs)
    if args.json:
        emit_json([{"journal": str(target), **report.as_json()} for target, _, report in outputs])
        return OK
    for target, records, report in outputs:
        _say(args, target, len(records), "a Claude Code transcript", report, report.skipped)
    return OK


def _claude_code_journals(
    args: argparse.Namespace, path: Path, data: bytes, main_target: str
) -> Iterator[tuple[str, Sequence[NewRecord], ImportReport]]:
    """The session's journal, then one per sub-agent transcript beside it (in a store: named by id;
    in files: `<journal id>.jsonl` next to the session's file)."""
    agents = _subagent_files(path)
    main = import_claude_code(data, lenient=args.lenient, links=_anchors(data, agents, path))
    yield main_target, main.records, main.report
    for agent_path in agents:
        try:
            sub = import_claude_code(agent_path.read_bytes(), lenient=args.lenient)
        except JournalError as exc:
            raise SourceFileError(agent_path, exc) from exc
        target = sub.journal if args.store else str(Path(main_target).parent / f"{sub.journal}.jsonl")
        yield target, sub.records, sub.report


def _folder(args: argparse.Namespace) -> int:
    """Every session under a folder (`~/.claude/projects`, `~/.codex/sessions`) into a store."""
    if args.store is None or args.source not in ("claude-code", "codex"):
        msg = "a folder imports into a store: waybook import claude-code|codex FOLDER --store URL"
        raise UsageError(msg)
    sessions = sorted(
        p
        for p in args.path.rglob("*.jsonl")
        if not p.name.startswith("agent-") and "subagents" not in p.parts
    )
    outputs: list[tuple[str, Sequence[NewRecord], ImportReport]] = []
    for session in track(sessions, description=f"reading {len(sessions)} sessions"):
        try:
            data = session.read_bytes()
            if args.source == "codex":
                codex = import_codex(data, lenient=args.lenient)
                outputs.append((codex.records[0].id, codex.records, codex.report))
            else:
                journal = import_claude_code(data, lenient=args.lenient).journal
                outputs.extend(_claude_code_journals(args, session, data, journal))
        except SourceFileError:
            raise
        except JournalError as exc:
            raise SourceFileError(session, exc) from exc
    _write_all(args, outputs)
    if args.json:
        emit_json([{"journal": target, **report.as_json()} for target, _, report in outputs])
    else:
        lines = sum(report.lines for _, _, report in outputs)
        warn(
            f"imported {len(sessions)} sessions as {len(outputs)} journals ({lines} source lines) "
            f"into {args.store}"
        )
    return OK


class SourceFileError(JournalError, ValueError):
    """One file of an import (a session of a folder, a sub-agent transcript beside a session) cannot be
    imported; nothing of the import was written."""

    def __init__(self, path: Path, cause: JournalError) -> None:
        self.path = path
        self.cause = cause
        super().__init__(f"{path}: {cause} (nothing of this import was written)")


def _subagent_files(session: Path) -> list[Path]:
    """The sub-agent transcripts of a session: SESSION/subagents/agent-*.jsonl, then agent-*.jsonl beside
    it that name the same session (the older layout)."""
    found = _inside(session, sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl")))
    if session.name.startswith("agent-"):
        return found
    session_id = _session_id(session.read_bytes())
    beside = [
        p
        for p in _inside(session, sorted(session.parent.glob("agent-*.jsonl")))
        if _session_id(p.read_bytes()) == session_id
    ]
    return found + [p for p in beside if p not in found]


def _inside(session: Path, paths: list[Path]) -> list[Path]:
    """`paths`, refused if a symbolic link takes one outside the session's folder."""
    home = session.parent.resolve()
    for path in paths:
        real = path.resolve()
        if not real.is_relative_to(home):
            msg = (
                f"{path}: a link to {real}, outside the session's folder {home}; waybook does not follow "
                "it (copy the transcript into the folder to import it); nothing was written"
            )
            raise UsageError(msg)
    return paths


def _session_id(data: bytes) -> str | None:
    for line in data.splitlines()[:50]:
        with contextlib.suppress(ValueError, RecursionError):  # a hostile line is the importer's to refuse
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


def track(items: Sequence[T], *, description: str) -> Iterable[T]:
    """`items`, with a progress bar on stderr when stderr is a terminal."""
    if not sys.stderr.isatty():
        return items
    from rich.console import Console
    from rich.progress import track as rich_track

    return rich_track(items, description=description, transient=True, console=Console(stderr=True))


def _write(
    args: argparse.Namespace,
    target: Path | str,
    records: Sequence[NewRecord],
    *,
    shown: dict[str, tuple[bytes, str]] | None = None,
) -> None:
    _write_all(args, [(str(target), records, None)], shown=shown)


def _write_all(
    args: argparse.Namespace,
    outputs: Sequence[tuple[str, Sequence[NewRecord], Any]],
    *,
    shown: dict[str, tuple[bytes, str]] | None = None,
) -> None:
    """Validate every journal in full, refuse if any target exists, then write each atomically.

    `shown` holds bytes the source file shows for blobs its records reference (a waybook export shows a
    text blob as its text). A store import stores them, with every image, before the journals; a plain
    file has no blobs, so they go inline. A reference whose bytes are nowhere is reported."""
    staged = []
    blobs: dict[str, tuple[bytes, str]] = dict(shown or {})
    for target, records, _ in outputs:
        if args.store is not None:  # a store keeps images as blobs: the journal holds references
            records, found = images_as_blobs(records)
            blobs.update(found)
        elif shown:
            records = inline_known(records, shown)
        staged.append((target, stage(target, records)))
    if args.store is not None:
        _write_to_store(args.store, staged, blobs)
        return
    _warn_missing(_unknown_blobs(staged, blobs))
    taken = [target for target, _ in staged if Path(target).exists()]
    if taken:
        msg = f"{', '.join(taken)}: already exist(s); choose a new file for the journal; nothing was written"
        raise UsageError(msg)
    for target, staging in staged:
        if not create_atomically(Path(target), b"".join(line + b"\n" for line in staging.read_lines())):
            msg = f"{target}: created by someone else meanwhile; nothing more was written"
            raise UsageError(msg)


IMPORT_BATCH: Final = 512
"""Records per batch of an imported journal. Every rule is checked (in memory) before any byte is
written, and the file is still written at once; the batches are what a reader sees later: damage to one
record costs the batch it is in, not the whole import (one batch would read as damaged from seq 1)."""


def stage(target: str, records: Sequence[NewRecord]) -> InMemoryJournal:
    """`records` appended to a new in-memory journal in batches of IMPORT_BATCH, every rule checked."""
    staging = InMemoryJournal(target)
    head = GENESIS
    for start in range(0, len(records), IMPORT_BATCH):
        head = staging.append(list(records[start : start + IMPORT_BATCH]), expected=head).head
    return staging


def _write_to_store(
    url: str, staged: Sequence[tuple[str, InMemoryJournal]], blobs: dict[str, tuple[bytes, str]]
) -> None:
    """Check no target exists, store the images, then write each journal (a blob before its reference)."""
    targets = [target for target, _ in staged]
    twice = sorted({t for t in targets if targets.count(t) > 1})
    if twice:
        msg = f"{', '.join(twice[:10])}: more than one source session has this id; nothing was written"
        raise UsageError(msg)
    with create_store(url) as store:
        taken = [target for target, _ in staged if store.exists(target)]
        if taken:
            msg = f"{', '.join(taken[:10])}: already in {url}; nothing was written"
            raise UsageError(msg)
        _warn_missing({digest for digest in _unknown_blobs(staged, blobs) if not store.blobs.exists(digest)})
        for data, media_type in blobs.values():  # each lease runs out by itself once referenced
            store.blobs.put(data, media_type=media_type)
        for target, staging in track(staged, description=f"writing {len(staged)} journals"):
            import_into_store(store, target, staging)


def _unknown_blobs(
    staged: Sequence[tuple[str, InMemoryJournal]], known: dict[str, tuple[bytes, str]]
) -> set[str]:
    """The blobs the journals reference whose bytes the import does not have (a binary blob that an
    export could not show)."""
    return set().union(*(references(staging.read()) for _, staging in staged)) - set(known)


def _warn_missing(digests: set[str]) -> None:
    if digests:
        warn(
            f"{plural(len(digests), 'blob reference')} whose bytes are not in the source (binary content "
            "the export could not show); `waybook verify --store URL ID --blobs` lists them as missing"
        )


def _say(
    args: argparse.Namespace,
    output: Path | str,
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
    warn(f"imported {plural(count, 'record')} from {what} into {output}")
    if report is not None:
        warn(
            f"{report.lines} source lines: {report.mapped} mapped, {report.kept_verbatim} kept verbatim, "
            f"{len(report.skipped)} skipped"
        )
    if skipped:
        lines = ", ".join(str(n) for n, _ in skipped[:10])
        warn(f"skipped {plural(len(skipped), 'unparseable line')} (--lenient): {lines}")
