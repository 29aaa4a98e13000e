"""`waybook export PATH --format openai|openai-dpo|trl-sft|trl-dpo|trl-kto|sharegpt|hf|archival|pi [--branches
...] [--pairs] [--turns] [--redact] -o OUT`: export trajectories for training, or the whole journal.

openai: OpenAI chat fine-tuning rows (messages, tools, parallel_tool_calls); openai-dpo: OpenAI DPO rows;
trl-sft: TRL conversational rows (messages, tools, outcome); trl-dpo and trl-kto: TRL preference rows from
labelled forks; sharegpt: LLaMA-Factory ShareGPT rows; hf: a Hugging Face dataset folder (Parquet shards and a
dataset card; -o DIR). --pairs: preference rows from sibling branches (labels decide, see docs/export.md);
--turns: one row per assistant turn with the exact context the model saw; archival: every record exactly as
stored (re-imports to an identical journal); pi: a Pi v3 session file. Training rows are made valid (every
tool call answered, no empty assistant turn) and what was dropped is reported on stderr. Blobs are read from
the journal's store (--store, or the directory store a journal file lives in). Output is deterministic.

Example: waybook export session.jsonl --format openai --branches all --redact -o train.jsonl
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from waybook._offload import blobs_inlined, images_from_blobs
from waybook.commands.common import open_journal, replay_with_progress, seq_arg
from waybook.commands.exits import OK, UsageError, warn
from waybook.commands.export_rows import PROGRESS_RECORDS, RowShaper, emit_stats
from waybook.commands.ids import check_at, resolve_id
from waybook.commands.journal_files import check_journal_file, damage_status
from waybook.commands.output import check_output, write_lines
from waybook.commands.progress import Phases
from waybook.commands.redact_patterns import add_redact_pattern_options, redact_patterns
from waybook.commands.subcommand import add_journal_command
from waybook.commands.terminal import plural
from waybook.export.trajectories import Selection, TrainingOptions, TrajectoryExporter, encode_row
from waybook.formats.pi import export_pi
from waybook.journal import iter_shown
from waybook.projections import TreeProjection
from waybook.stores import blobs_for, local_path

FORMATS = ("openai", "openai-dpo", "trl-sft", "trl-dpo", "trl-kto", "sharegpt", "hf", "archival", "pi")
PAIR_FORMATS = ("openai-dpo", "trl-dpo", "trl-kto")
"""Formats whose rows are preference pairs (`--pairs` is implied)."""
WHOLE = ("archival", "pi")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_journal_command(commands, "export", __doc__)
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument(
        "--branches", default="active", metavar="active|all|LEAF", help="which branches (default active)"
    )
    parser.add_argument(
        "--pairs", action="store_true", help="preference pairs (chosen/rejected) from sibling branches"
    )
    parser.add_argument(
        "--turns", action="store_true", help="one OpenAI row per assistant turn, with its exact context"
    )
    parser.add_argument(
        "--redact", action="store_true", help="mask secrets (keys, tokens, private keys, URL passwords)"
    )
    add_redact_pattern_options(parser, applies="implies --redact")
    parser.add_argument(
        "--aborted",
        choices=["drop", "keep"],
        default="drop",
        help="assistant turns that stopped aborted or in error: drop (default), or keep the non-empty ones",
    )
    parser.add_argument(
        "--unanswered",
        choices=["drop", "stub"],
        default="drop",
        help="tool calls that never got a result: drop (default), or answer with a 'no result' stub",
    )
    parser.add_argument(
        "--thinking",
        choices=["drop", "tag", "field"],
        default="drop",
        help="thinking blocks: drop (default), put them before the text in <think> tags, or (trl-*, hf) "
        "keep them as the assistant message's reasoning_content",
    )
    parser.add_argument(
        "--metadata",
        action="store_true",
        help="each row also carries `metadata` (journal, leaf, head): provenance no trainer's format defines",
    )
    parser.add_argument(
        "--images",
        choices=["inline", "placeholder", "drop"],
        default="inline",
        help="images from the user or a tool: inline (default; OpenAI rows carry them as data: URLs, blobs "
        "read from the store), a [image: TYPE] placeholder, or drop them",
    )
    parser.add_argument(
        "--blobs",
        choices=["inline", "reference"],
        default="inline",
        help="text kept as a blob (large tool outputs): inline its text (default), or a reference naming "
        "its sha256, size and type",
    )
    parser.add_argument(
        "--harness",
        choices=["drop", "keep"],
        default="drop",
        help="harness noise (Claude Code command tags and caveats, /compact and other slash-command "
        "lines, ANSI escapes in tool output): drop (default), or keep messages as recorded",
    )
    parser.add_argument(
        "--erased",
        choices=["drop", "mark"],
        default="drop",
        help="rows holding content `waybook erase` removed: drop them whole (default; counted), or mark: "
        "keep them with the placeholder naming the erasure ([erased by #SEQ: REASON]) in its place; "
        "the other messages' text is never changed",
    )
    parser.add_argument("--max-rows", type=int, metavar="N", help="write at most N rows (training formats)")
    parser.add_argument(
        "--last-turns",
        type=int,
        metavar="N",
        help="each row keeps its system messages and only its last N turns (a turn starts at a user message)",
    )
    parser.add_argument(
        "--dedupe-prefix",
        action="store_true",
        help="with --turns: a row whose first messages repeat an earlier row's names that row and its "
        "message count instead (waybook's layout, not OpenAI's upload format; see docs/export.md)",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="print rows, tokens (estimated at 4 characters a token), tool calls and drops per reason",
    )
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="export the session as it was at this seq")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="a new output file (created 0600), or - for stdout; never the journal itself or another "
        "journal; with --format hf, a new directory",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing OUT (atomically: written beside it, then renamed)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    patterns = _check(args)
    if args.store is None:
        check_journal_file(Path(args.path))  # the input first: `export / -o OUT` names no journal
    inputs = _inputs(args)  # what the output must never replace (a store's files: walked once)
    if args.output != "-":
        _outside_store(args)
        if args.format == "hf":
            _check_directory(args, inputs)
        else:
            check_output(Path(args.output), inputs=inputs, force=args.force)
    with open_journal(args.path, args.store) as journal:
        check_at(args.at, journal.head().seq, path=args.path)
        status = _export(args, journal, inputs, patterns)
    return max(status, damage_status(journal))


def _check(args: argparse.Namespace) -> list[str]:
    """Every flag that does not fit the format, refused before anything is read or written; the redaction
    patterns the export uses (read once: --redact-patterns-file is not read again)."""
    training = _options(args)
    patterns = redact_patterns(args)
    fmt = args.format
    if fmt in WHOLE and (
        args.redact
        or patterns
        or args.pairs
        or args.turns
        or args.metadata
        or args.branches != "active"
        or training != TrainingOptions()
    ):
        msg = (
            f"--format {fmt} exports the whole journal; --redact (and its patterns), --pairs, --turns, "
            "--metadata, --branches and the training options do not apply"
        )
        raise UsageError(msg)
    if args.pairs and fmt not in ("openai", "hf", *PAIR_FORMATS):
        msg = f"--pairs writes preference rows; use --format trl-dpo, trl-kto or openai-dpo, not {fmt}"
        raise UsageError(msg)
    if args.turns and fmt not in ("openai", "trl-sft", "hf"):
        msg = (
            f"--turns writes one row per assistant turn with --format openai (weight 0 on earlier turns) "
            f"or trl-sft / hf (prompt and completion), not {fmt}"
        )
        raise UsageError(msg)
    if (args.pairs or fmt in PAIR_FORMATS) and args.turns:
        msg = "choose one of --pairs (or a preference format) and --turns"
        raise UsageError(msg)
    if args.thinking == "field" and fmt not in ("trl-sft", "trl-dpo", "trl-kto", "hf"):
        msg = (
            f"--thinking field writes reasoning_content, which --format {fmt} does not define; use it with "
            "trl-sft, trl-dpo, trl-kto or hf (or --thinking tag)"
        )
        raise UsageError(msg)
    if args.dedupe_prefix and not args.turns:
        msg = "--dedupe-prefix applies to --turns rows (each repeats the context before it)"
        raise UsageError(msg)
    if args.dedupe_prefix and fmt == "hf":
        msg = "--dedupe-prefix writes waybook's own JSONL layout; a --format hf dataset holds whole rows"
        raise UsageError(msg)
    if fmt == "hf" and args.output == "-":
        msg = "--format hf writes a dataset folder: give -o DIR (a new directory), not -"
        raise UsageError(msg)
    for flag, value in (("--max-rows", args.max_rows), ("--last-turns", args.last_turns)):
        if value is not None and value < 1:
            msg = f"{flag} {value}: give a positive number"
            raise UsageError(msg)
        if value is not None and fmt in WHOLE:
            msg = f"{flag} applies to training rows; --format {fmt} exports the whole journal"
            raise UsageError(msg)
    return patterns


def _check_directory(args: argparse.Namespace, inputs: list[Path]) -> None:
    output = Path(args.output)
    if any(output.resolve() == source.resolve() for source in inputs):
        msg = f"{output}: that is the input; write the dataset to a new directory"
        raise UsageError(msg)
    if output.exists() and not (output.is_dir() and args.force):
        what = "already exists" if output.is_dir() else "is a file"
        msg = f"-o {output}: {what}; --format hf writes a new directory (pass --force to replace one)"
        raise UsageError(msg)
    if not output.parent.is_dir():
        msg = f"-o {output}: there is no directory {output.parent}; create it, or write the dataset elsewhere"
        raise UsageError(msg)


def _export(args: argparse.Namespace, journal: Any, inputs: list[Path], patterns: list[str]) -> int:
    if args.format == "archival":
        count = _write(args, journal.read_lines(limit=args.at), inputs)
        warn(
            f"wrote {plural(count, 'record')} to {args.output} "
            "(not redacted: an archive is the journal as written)"
        )
        return OK
    blobs = blobs_for(journal)
    if args.format == "pi":
        records = images_from_blobs(iter_shown(journal, journal.read(limit=args.at)), blobs)
        count = _write(args, export_pi(records, shown=lambda record: blobs_inlined(record, blobs)), inputs)
        warn(
            f"wrote {plural(count, 'Pi line')} to {args.output} "
            "(not redacted: a Pi export is the session as written)"
        )
        return OK
    tree = replay_with_progress(TreeProjection(), journal, at=args.at)
    exporter = TrajectoryExporter(
        journal,
        at=args.at,
        redact=args.redact,
        redact_patterns=patterns,
        tree=tree,
        options=_options(args),
        blobs=blobs,
        provenance=args.metadata,
    )
    branches = args.branches
    if branches not in ("active", "all"):
        branches = resolve_id(tree, branches, what="--branches", path=args.path)
    selection = Selection(branches)
    rows, what, shape = _rows(args, exporter, selection)
    shaped = RowShaper(args.max_rows, args.last_turns, dedupe=args.dedupe_prefix)
    with Phases(journal.head().seq, threshold=PROGRESS_RECORDS) as progress:
        progress.start(f"exporting {what[1]}")
        if args.format == "hf":
            count = _write_dataset(args, shaped.rows(rows, progress), shape, exporter)
        else:
            count = _write(args, (encode_row(row) for row in shaped.rows(rows, progress)), inputs)
    warn(f"wrote {plural(count, *what)} to {args.output}")
    if shaped.stopped:
        warn(f"stopped at --max-rows {args.max_rows}; more rows were left")
    if (args.pairs or args.format in PAIR_FORMATS) and count == 0:
        warn(exporter.no_pairs_reason())
    if args.stats:
        emit_stats(shaped.stats, exporter.dropped)
    if exporter.dropped:
        detail = "; ".join(f"{reason}: {n}" for reason, n in sorted(exporter.dropped.items()))
        warn(f"left out to keep every row valid (see --help for the options): {detail}")
    warn(_redaction(exporter))
    return OK


def _rows(
    args: argparse.Namespace, exporter: TrajectoryExporter, selection: Selection
) -> tuple[Iterator[dict[str, Any]], tuple[str, str], str]:
    """The rows the flags ask for, what they are called, and their shape (waybook.export.hf.FORMATS)."""
    fmt = args.format
    if fmt in PAIR_FORMATS or args.pairs:
        shape = fmt if fmt in PAIR_FORMATS else "trl-dpo" if fmt == "hf" else "openai"
        what = (
            ("preference row", "preference rows")
            if shape == "trl-kto"
            else ("preference pair", "preference pairs")
        )
        return exporter.pairs(shape), what, shape  # type: ignore[arg-type]
    if args.turns:
        shape = "openai" if fmt == "openai" else "trl-turns"
        rows = exporter.turns(selection, "openai" if fmt == "openai" else "trl-sft")
        return rows, ("assistant turn", "assistant turns"), shape
    shape = "trl-sft" if fmt == "hf" else fmt
    return exporter.rows(shape, selection), ("trajectory", "trajectories"), shape  # type: ignore[arg-type]


def _redaction(exporter: TrajectoryExporter) -> str:
    if exporter.redactor is None:
        return "not redacted: secrets in the session are exported as written (add --redact to mask them)"
    detail = ", ".join(f"{name}: {n}" for name, n in sorted(exporter.redactor.counts.items()))
    return f"masked {plural(exporter.redactor.total, 'secret')}" + (f" ({detail})" if detail else "")


def _write_dataset(
    args: argparse.Namespace,
    rows: Iterable[dict[str, Any]],
    shape: str,
    exporter: TrajectoryExporter,
) -> int:
    from waybook._version import __version__
    from waybook.export.hf import DatasetsMissingError, write_dataset

    head = exporter.head
    card = {
        "title": f"waybook export of {exporter.journal_id}",
        "provenance": [
            f"journal `{exporter.journal_id}` at seq {head.seq}, digest `{head.digest}`",
            f"branches: {args.branches}; rows: {shape}",
            f"written by waybook {__version__} (`waybook export --format hf`)",
            "options: " + ", ".join(f"{k}={v}" for k, v in sorted(attrs.asdict(exporter.options).items())),
        ],
        "redaction": "Redacted: " + _redaction(exporter)
        if exporter.redactor is not None
        else ("Not redacted: secrets in the sessions are as written (export with --redact to mask them)."),
        "dropped": dict(exporter.dropped),
    }
    try:
        return write_dataset(
            rows, args.output, fmt=shape, card=card, metadata=args.metadata, force=args.force
        )
    except DatasetsMissingError as exc:
        raise UsageError(str(exc)) from None


def _write(args: argparse.Namespace, lines: Iterable[bytes], inputs: list[Path]) -> int:
    return write_lines(args.output, lines, inputs=inputs, force=args.force)


def _options(args: argparse.Namespace) -> TrainingOptions:
    """Each field of TrainingOptions is the export flag of its name (`aborted` is --aborted, ...)."""
    return TrainingOptions(**{name: getattr(args, name) for name in attrs.fields_dict(TrainingOptions)})


def _outside_store(args: argparse.Namespace) -> None:
    """Refuse an -o inside the --store's folder (or beside its database as its -wal, -shm, -journal): a
    file planted there would read as a journal of the store that its catalog never listed."""
    store = local_path(str(args.store)) if args.store is not None else None
    if store is None:
        return
    output, home = Path(args.output).resolve(), store.resolve()
    beside = {home.parent / f"{home.name}{end}" for end in ("-wal", "-shm", "-journal")}
    if output.is_relative_to(home) or output in beside:
        msg = (
            f"-o {args.output} is inside the store {args.store}; an export goes outside it "
            "(choose -o elsewhere; to copy a journal into a store use waybook import --store)"
        )
        raise UsageError(msg)


def _inputs(args: argparse.Namespace) -> list[Path]:
    """What the output must never replace: the journal file, or with --store the store's own files."""
    if args.store is None:
        return [Path(args.path)]
    store = local_path(str(args.store))
    if store is not None:
        return [store, *(store.parent / f"{store.name}{end}" for end in ("-wal", "-shm"))] + (
            [*store.rglob("*")] if store.is_dir() else []
        )
    return []
