"""`waybook import FORMAT PATH -o OUT`: import another agent's session (Pi, Claude Code, Codex, OpenAI Agents,
LangGraph, OpenCode).

Import a Pi session file (versions 1-3), a Claude Code transcript, a Codex CLI rollout, an OpenAI Agents SDK
session database (SQLiteSession, or AdvancedSQLiteSession with its branches), a LangGraph SqliteSaver thread
or an OpenCode session (its storage folder or SQLite database) into a new JSONL journal (auto: the format read
from the content). Branches the source keeps implicit become explicit leaf moves. Lines that do not parse are
refused with their line numbers unless --lenient skips them. Each journal is validated in full before one
atomic write. A Claude Code session's sub-agent transcripts (SESSION/subagents/agent-*.jsonl, or agent-*.jsonl
beside it) become journals named <OUT name>.agent-<id>.jsonl next to OUT, linked from the tool call that
started them; so do an OpenCode session's sub-agent sessions (<OUT name>.agent-<session id>.jsonl).

Example: waybook import pi ~/.pi/agent/sessions/x.jsonl -o x.waybook.jsonl
Example: waybook import claude-code ~/.claude/projects/p/SESSION.jsonl -o s.jsonl --json
Example: waybook import auto rollout.jsonl --store file:audit my-rollout

Every import reports how every source line was used (`--json` prints the report). An import into a store
(`--store`) keeps each image as a blob, stored before the journal that references it (waybook._offload).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from waybook._files import create_atomically
from waybook._masking import SecretMask
from waybook._offload import images_as_blobs, inline_known
from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, USAGE, UsageError, warn
from waybook.commands.export_rows import PROGRESS_RECORDS
from waybook.commands.growth import JournalDivergedError, batches, bulk_url, held_prefix, sealed
from waybook.commands.import_report import Written, failure_json, say
from waybook.commands.import_spool import Spool
from waybook.commands.progress import Phases
from waybook.commands.store_option import (
    URLS,
    Staged,
    create_store,
    import_into_store,
    import_sealed_into_store,
)
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import plural
from waybook.formats import (
    ImportedSession,
    ImportReport,
    RefusedFileError,
    SkippedFile,
    check_regular,
    claude_code,
    codex,
    detect_folder_format,
    detect_format,
    linked_both_ways,
    read_regular,
)
from waybook.formats.langgraph import import_langgraph, read_thread
from waybook.formats.openai_agents import import_openai_agents, read_session
from waybook.formats.opencode import import_opencode, is_storage_folder, read_opencode
from waybook.formats.pi import NO_PLACES as PI_NO_PLACES
from waybook.formats.pi import import_pi
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, Header, JournalError, NewRecord
from waybook.stores import JournalStore, SealedCreating, copy_records, references

T = TypeVar("T")
Output = tuple[str, Sequence[NewRecord], ImportReport]
"""A journal to write: where (a file, or an id in the store), its records, its source's report."""
FORMATS = ("pi", "claude-code", "codex", "openai-agents", "langgraph", "opencode")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "import", __doc__)
    parser.add_argument(
        "source", choices=(*FORMATS, "auto"), help="the format of the file (auto: read from its content)"
    )
    parser.add_argument(
        "path", type=Path, metavar="PATH", help="the session file (or, with --store, a folder of them)"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="OUT", help="the new journal file (with --store: its id)"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace existing journal files the import writes (atomically; never a journal in a store)",
    )
    parser.add_argument(
        "--store",
        nargs="+",
        metavar=("URL", "JOURNAL_ID"),
        help=f"the store ({URLS}) and the new journal's id (-o ID says the same); the store is created "
        "if missing, and PATH may be a folder of Claude Code or Codex sessions (one journal each, named "
        "by session)",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="skip lines and entries that cannot be imported (and, in a folder, files of another format), "
        "and report each",
    )
    add_json_option(parser, "print the import report (or the failure) as one JSON object")
    parser.add_argument(
        "--verbose", action="store_true", help="list every inferred note, not only their count"
    )
    parser.add_argument(
        "--redact",
        action="store_true",
        help="mask secrets (the detector of `export --redact`) before anything is written: the journal "
        "never holds them, and each masked message says what kind was masked where",
    )
    parser.add_argument(
        "--seal",
        action="store_true",
        help="write the journal sealed (schema 2), so that `waybook erase` and `waybook retain` can erase "
        "its content; its bytes then differ from one import to the next (random salts). A store's journal "
        "begun unsealed is continued as it began",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="openai-agents, opencode: the session to import, when the storage holds several",
    )
    parser.add_argument(
        "--thread", metavar="ID", help="langgraph: the thread to import, when the database holds several"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.json:
        return _run(args)
    try:
        return _run(args)
    except UsageError as exc:
        emit_json(failure_json(exc))
        return USAGE
    except JournalError as exc:
        emit_json(failure_json(exc))
        return PROBLEM


def _run(args: argparse.Namespace) -> int:
    try:
        return _import(args)
    except RefusedFileError as exc:  # the folder holds what an import never reads: the user's to fix
        msg = f"{exc}; nothing was written"
        raise UsageError(msg) from exc


def _import(args: argparse.Namespace) -> int:
    _target(args)
    if not args.path.is_dir():
        if not (args.path.exists() or args.path.is_symlink()):
            msg = f"{args.path}: no such file"
            raise UsageError(msg)
        check_regular(args.path)  # a FIFO, device or socket is refused by name, before any format reads
    if args.source == "auto":
        args.source = _detected(args.path)
    if args.source == "opencode":
        return _opencode(args)
    if args.path.is_dir():
        return _folder(args)
    if args.output is None:
        msg = "say where the journal goes: -o OUT (a new file), or --store URL JOURNAL_ID"
        raise UsageError(msg)
    out = str(args.output)
    if args.source == "openai-agents":
        session_id, rows, branches = read_session(args.path, args.session)
        agents = import_openai_agents(session_id, rows, branches, lenient=args.lenient, name=_store_id(args))
        held = _write(args, args.output, agents.records)
        say(
            args,
            [Written(out, len(agents.records), agents.report, held)],
            f"OpenAI Agents session {session_id!r}",
        )
        return OK
    if args.source == "langgraph":
        thread_id, checkpoints = read_thread(args.path, args.thread)
        graph = import_langgraph(thread_id, checkpoints, name=_store_id(args))
        held = _write(args, args.output, graph.records)
        what = f"LangGraph thread {thread_id!r} ({len(checkpoints)} checkpoints)"
        say(args, [Written(out, len(graph.records), graph.report, held)], what)
        return OK
    if args.source == "claude-code":
        session = claude_code.import_session(args.path, lenient=args.lenient, name=_name(args))
        outputs = _session_outputs(args, session)
        held_by = _write_all(args, outputs)
        say(args, _written(outputs, held_by), "a Claude Code transcript")
        return OK
    data = read_regular(args.path)
    if args.source == "pi":
        imported = import_pi(data, lenient=args.lenient, name=_store_id(args))
        held = _write(args, args.output, imported.records, shown=imported.blobs, sizes=imported.places)
        warnings = []
        if imported.joined:
            lines = ", ".join(str(n) for n in imported.joined[:10])
            warnings.append(
                f"{plural(len(imported.joined), 'line')} held two entries (a concurrent write), which Pi's "
                f"loader skips: kept verbatim out of the session (a pi.joined_line entry): line {lines}"
            )
        warnings += [why for _line, why in imported.inferred if why == PI_NO_PLACES]
        report = _pi_report(data, imported.skipped, imported.inferred, joined=len(imported.joined))
        say(
            args,
            [Written(out, len(imported.records), report, held)],
            f"a Pi v{imported.version} session",
            warnings=warnings,
        )
        return OK
    rollout = codex.import_codex(data, lenient=args.lenient, name=_store_id(args))
    held = _write(args, args.output, rollout.records)
    say(args, [Written(out, len(rollout.records), rollout.report, held)], "a Codex rollout")
    return OK


def _written(outputs: Sequence[Output], held: dict[str, int]) -> list[Written]:
    return [Written(t, len(r), rep, held.get(t, 0)) for t, r, rep in outputs]


def _opencode(args: argparse.Namespace) -> int:
    if not args.path.exists():
        msg = f"{args.path}: no such folder or database"
        raise UsageError(msg)
    if args.output is None:
        msg = "say where the journal goes: -o OUT (a new file), or --store URL JOURNAL_ID"
        raise UsageError(msg)
    stored = read_opencode(args.path, args.session, lenient=args.lenient)
    imported = import_opencode(stored, name=_name(args), journal=_store_id(args))
    outputs = [(str(args.output), imported.records, imported.report)]
    outputs += [(_beside(args, sub.journal), sub.records, sub.report) for sub in imported.subagents]
    held_by = _write_all(args, outputs)
    what = "an OpenCode session" + (" and its sub-agent sessions" if imported.subagents else "")
    say(args, _written(outputs, held_by), what)
    return OK


def _pi_report(
    data: bytes, skipped: Sequence[tuple[int, str]], inferred: Sequence[tuple[int, str]], *, joined: int
) -> ImportReport:
    """A Pi import in the report every format gives: every entry maps to a record (lossless); a joined
    line, which Pi's loader skips, is kept verbatim."""
    lines = sum(1 for line in data.split(b"\n") if line.strip())
    bad = len({n for n, _ in skipped})
    notes = tuple(f"line {n}: {why}" for n, why in inferred)
    return ImportReport("pi", lines, max(lines - bad - joined, 0), joined, tuple(skipped), notes)


def _detected(path: Path) -> str:
    """`import auto`: the format of a file, or of a folder, by content."""
    found = detect_folder_format(path) if path.is_dir() else detect_format(path)
    if found is None:
        msg = f"{path}: no format waybook imports fits its content; name one: {', '.join(FORMATS)}"
        raise UsageError(msg)
    return found


def _target(args: argparse.Namespace) -> None:
    """One shape: `-o OUT` (a file), or `--store URL JOURNAL_ID` (`-o ID` is the same id)."""
    store = args.store or [None]
    if len(store) > 2:
        msg = f"--store takes a URL and a journal id, not {len(store)} words: {' '.join(store)}"
        raise UsageError(msg)
    args.store, args.journal_id = store[0], (store[1] if len(store) == 2 else None)
    if args.journal_id is not None:
        if args.path.is_dir() and not is_storage_folder(args.path):
            msg = f"{args.journal_id}: a folder imports one journal per session, named by session; drop it"
            raise UsageError(msg)
        if args.output is not None and str(args.output) != args.journal_id:
            msg = f"two ids for one journal: {args.journal_id} and -o {args.output}; give one"
            raise UsageError(msg)
        args.output = Path(args.journal_id)
    if args.force and args.store is not None:
        msg = "--force replaces files; a journal in a store is never replaced: choose a new JOURNAL_ID"
        raise UsageError(msg)


def _name(args: argparse.Namespace) -> str:
    """The name the journals of one import follow: the store id, or the output file's stem."""
    return str(args.output) if args.store is not None else Path(args.output).name.removesuffix(".jsonl")


def _store_id(args: argparse.Namespace) -> str | None:
    """The id a single session's journal gets in the store, which its header names (a store's journal
    names its own id); None for a file, whose header names the source's session as before."""
    return str(args.output) if args.store is not None else None


def _beside(args: argparse.Namespace, journal: str) -> str:
    """Where a sub-agent's journal goes: in a store, its id; else `<journal id>.jsonl` next to OUT."""
    return journal if args.store else str(Path(args.output).parent / f"{journal}.jsonl")


def _session_outputs(args: argparse.Namespace, session: ImportedSession) -> list[Output]:
    """The session's journal at OUT (or the store id), then its sub-agents' beside it."""
    outputs: list[Output] = [(str(args.output), session.journal.records, session.journal.report)]
    outputs += [(_beside(args, sub.journal), sub.records, sub.report) for sub in session.subagents]
    return outputs


def _folder(args: argparse.Namespace) -> int:
    """Every session under a folder (`~/.claude/projects`, `~/.codex/sessions`) into a store: each
    session read, linked, checked and spooled in turn (waybook.commands.import_spool), then, once every
    one is checked, each journal written."""
    if args.store is None or args.source not in ("claude-code", "codex"):
        msg = "a folder imports into a store: waybook import claude-code|codex FOLDER --store URL"
        raise UsageError(msg)
    sessions_in = claude_code.sessions_in_folder if args.source == "claude-code" else codex.sessions_in_folder
    outputs: list[tuple[str, int, ImportReport]] = []
    skipped_files: list[tuple[str, str]] = []
    sessions = 0
    with tempfile.TemporaryFile(prefix="waybook-import-") as file:
        spool, unknown = Spool(file), set[str]()
        with contextlib.ExitStack() as stack:
            for found in sessions_in(args.path, lenient=args.lenient, progress=_Reading(stack)):
                if isinstance(found, SkippedFile):
                    skipped_files.append((str(found.path), found.reason))
                    continue
                sessions += 1
                outputs += _spool_session(found, spool, unknown)
        held_by = _write_to_store(args.store, spool.journals, spool.blobs, unknown - set(spool.blobs))
    written = [Written(target, count, report, held_by.get(target, 0)) for target, count, report in outputs]
    if args.json:
        say(args, written, "", skipped_files=skipped_files)
    else:
        lines = sum(report.lines for _, _, report in outputs)
        warn(
            f"imported {sessions} sessions as {len(outputs)} journals "
            f"({lines} source lines) into {args.store}"
        )
        for file_name, why in skipped_files:
            warn(f"skipped {file_name} (--lenient): {why}")
    return OK


def _spool_session(
    session: ImportedSession, spool: Spool, unknown: set[str]
) -> list[tuple[str, int, ImportReport]]:
    """Link, check and spool each journal of `session` (its images kept as blobs, the blobs its records
    reference added to `unknown`); each journal's target, record count and report."""
    journals = session.journals
    outputs = []
    for journal, linked in zip(journals, linked_both_ways([j.records for j in journals]), strict=True):
        records, images = images_as_blobs(linked)
        for digest, (data, media_type) in images.items():
            spool.blobs.add(digest, data, media_type)
        staging = stage(journal.journal, records)
        unknown.update(references(staging.read()))
        spool.add(journal.journal, staging)
        outputs.append((journal.journal, len(records), journal.report))
    return outputs


class _Reading:
    """A folder import's progress: a bar over the session files read, from its first report on."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._phases: Phases | None = None

    def __call__(self, done: int, total: int) -> None:
        if self._phases is None:
            self._phases = self._stack.enter_context(Phases(total, threshold=FOLDER_PROGRESS))
            self._phases.start(f"reading {total} sessions", total=total)
        self._phases.advance(done)


FOLDER_PROGRESS: Final = 5
"""Folder imports of at least this many sessions show a progress bar (on a terminal)."""


def track(items: Sequence[T], *, description: str, threshold: int = FOLDER_PROGRESS) -> Iterator[T]:
    """`items`, with a progress bar on stderr when stderr is a terminal and there are enough of them."""
    with Phases(len(items), threshold=threshold) as progress:
        progress.start(description, total=len(items))
        for done, item in enumerate(items, start=1):
            yield item
            progress.advance(done)


def _write(
    args: argparse.Namespace,
    target: Path | str,
    records: Sequence[NewRecord],
    *,
    shown: dict[str, tuple[bytes, str]] | None = None,
    sizes: Sequence[tuple[int, int] | None] | None = None,
) -> int:
    """Write one journal; the records it held already (a store's journal of a session that grew)."""
    held = _write_all(args, [(str(target), records, None)], shown=shown, places={str(target): sizes})
    return held.get(str(target), 0)


def _write_all(
    args: argparse.Namespace,
    outputs: Sequence[tuple[str, Sequence[NewRecord], Any]],
    *,
    shown: dict[str, tuple[bytes, str]] | None = None,
    places: dict[str, Sequence[tuple[int, int] | None] | None] | None = None,
) -> dict[str, int]:
    """Validate every journal in full, refuse if any target file exists, then write each atomically; in
    a store, a journal that holds the start of its import gets the rest appended (the records it held, by
    target, are returned), and one that differs stops everything.

    `shown` holds bytes the source file shows for blobs its records reference (a waybook export shows a
    text blob as its text). A store import stores them, with every image, before the journals; a plain
    file has no blobs, so they go inline. A reference whose bytes are nowhere is reported. `places`
    holds, by target, each record's batch place as a waybook export carried it: the journal is then
    appended in those batches, so every record keeps its digest (the place is inside the bytes it
    covers)."""
    staged = []
    both_ways = linked_both_ways([records for _, records, _ in outputs])  # each sub-agent names its parent
    if args.seal:
        both_ways = [tuple(sealed(records)) for records in both_ways]
    if args.redact:  # text a waybook export showed for a blob is inlined first, so it is masked too
        both_ways = [
            tuple(masked(inline_known(records, shown) if shown else records)) for records in both_ways
        ]
        shown = None
    blobs: dict[str, tuple[bytes, str]] = dict(shown or {})
    outputs = [
        (target, records, report) for (target, _, report), records in zip(outputs, both_ways, strict=True)
    ]
    total = sum(len(records) for _, records, _ in outputs)
    threshold = 1 if total >= PROGRESS_RECORDS else len(outputs) + 1  # a big import shows its journals
    for target, records, _ in track(outputs, description=f"checking {total} records", threshold=threshold):
        if args.store is not None:  # a store keeps images as blobs: the journal holds references
            records, found = images_as_blobs(records)
            blobs.update(found)
        elif shown:
            records = inline_known(records, shown)
        staged.append((target, stage(target, records, (places or {}).get(target))))
    if args.store is not None:  # (a folder's journals are named by their headers: no check needed there)
        for target, staging in staged:
            _check_header_names(args.store, target, staging)
        return _write_to_store(args.store, staged, blobs, _unknown_blobs(staged, blobs))
    _warn_missing(_unknown_blobs(staged, blobs))
    taken = [target for target, _ in staged if Path(target).exists() or Path(target).is_symlink()]
    for target in taken:
        if not Path(target).is_file() or os.path.samefile(target, args.path):
            msg = f"{target}: is not a journal file the import may replace (the source, or not a file)"
            raise UsageError(msg)
    if taken and not args.force:
        msg = (
            f"{', '.join(taken)}: already exist(s); pass --force to replace, or choose a new file for the "
            "journal; nothing was written"
        )
        raise UsageError(msg)
    for target, staging in staged:
        if args.force:
            _replace(Path(target), b"".join(line + b"\n" for line in staging.read_lines()))
        elif not create_atomically(Path(target), b"".join(line + b"\n" for line in staging.read_lines())):
            msg = f"{target}: created by someone else meanwhile; nothing more was written"
            raise UsageError(msg)
    return {}


def masked(records: Sequence[NewRecord]) -> list[NewRecord]:
    """`records` with every secret the export's detector finds masked, and the record of it in each
    message's details (waybook._masking): what `--redact` appends instead of the source's text."""
    mask = SecretMask()
    return [mask.record(record) for record in records]


def stage(
    target: str, records: Sequence[NewRecord], places: Sequence[tuple[int, int] | None] | None = None
) -> InMemoryJournal:
    """`records` appended to a new in-memory journal, every rule checked: one record an append (so an
    import's bytes never depend on where its source was cut: waybook.commands.growth), or in the batches
    `places` names (each record's `(index, size)`, None for one appended alone: what a waybook export
    carried)."""
    staging = InMemoryJournal(target)
    head = GENESIS
    for batch in batches(records, places):
        head = staging.append(batch, expected=head).head
    return staging


def _replace(path: Path, data: bytes) -> None:
    """Write `path` whole: beside it, then renamed over it (a reader sees the old or the new file)."""
    path = path.resolve()
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp_name, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)


def _write_to_store(
    url: str,
    staged: Sequence[tuple[str, Staged]],
    blobs: Mapping[str, tuple[bytes, str]],
    unknown: set[str],
) -> dict[str, int]:
    """Check each target (new, or holding the start of its import), store the images, then write each
    journal (a blob before its reference): a new one whole, a grown one's new records after its own.
    `unknown`: the blobs referenced whose bytes the import does not have. Returns the records each
    target held already."""
    targets = [target for target, _ in staged]
    twice = sorted({t for t in targets if targets.count(t) > 1})
    if twice:
        msg = f"{', '.join(twice[:10])}: more than one source session has this id; nothing was written"
        raise UsageError(msg)
    with create_store(bulk_url(url)) as store:
        held: dict[str, int] = {}
        for target, staging in staged:
            if store.exists(target):
                held[target] = _held(store, url, target, staging)
        _warn_missing({digest for digest in unknown if not store.blobs.exists(digest)})
        for data, media_type in blobs.values():  # each lease runs out by itself once referenced
            store.blobs.put(data, media_type=media_type)
        writing = track(staged, description=f"writing {len(staged)} journals")
        if isinstance(store, SealedCreating):  # each new journal whole: one write, fsyncs shared
            import_sealed_into_store(store, ((t, s) for t, s in writing if t not in held))
            writing = iter([(t, s) for t, s in staged if t in held])
        for target, staging in writing:
            if target not in held:
                import_into_store(store, target, staging)
            elif held[target] < staging.head().seq:
                with store.open(target) as journal:
                    copy_records(staging.read(after=held[target]), journal, expected=journal.head())
                    journal.flush()
    return held


def _check_header_names(url: str, target: str, staging: Staged) -> None:
    """A usage error, before anything is written, if the journal's header names another journal than
    JOURNAL_ID (a waybook journal its export carried whole keeps its header): a store refuses it."""
    first = next(iter(staging.read()), None)  # (an InMemoryJournal: its first record, decoded already)
    header = first.body if first is not None else None
    if isinstance(header, Header) and header.journal != target:
        msg = (
            f"--store {url} {target}: the journal's header names journal {header.journal!r} (a waybook "
            "journal its export carried whole keeps its header, and every digest after it), and a store's "
            f"journal names its own id: import it as `--store {url} {header.journal}` (then `waybook "
            f"migrate --store {url} {header.journal} --to {target}` makes a copy named {target!r}); "
            "nothing was written"
        )
        raise UsageError(msg)


def _held(store: JournalStore, url: str, target: str, staging: Staged) -> int:
    """How many of the import's records the journal `target` already holds; a usage error if it holds
    anything else (nothing is written)."""
    records = [NewRecord(id=r.id, at=r.at, body=r.body) for r in staging.read()]
    try:
        with store.open(target) as journal:
            return held_prefix(journal, target, records)
    except JournalDivergedError as exc:
        msg = (
            f"{target} in {url} holds another import: {exc}. The source was rewritten, truncated or "
            "replaced since (or imported with other options); import it under a new JOURNAL_ID; nothing "
            "was written"
        )
        raise UsageError(msg) from exc


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
