"""`waybook export PATH --format openai|sharegpt|archival|pi [--branches ...] [--pairs] [--redact] -o OUT`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from waybook.codecs.pi import export_pi
from waybook.commands import common
from waybook.commands.common import OK, UsageError, guarded, open_journal, replay_with_progress, seq_arg, warn
from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row
from waybook.projections import TreeProjection

FORMATS = ("openai", "sharegpt", "archival", "pi")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "export",
        help="export trajectories for training, or the whole journal",
        description=(
            "openai: chat fine-tuning rows (messages, tool_calls, tools); sharegpt: conversations; "
            "--pairs: TRL preference rows from sibling branches; archival: every record exactly as stored "
            "(re-imports to an identical journal); pi: a Pi v3 session file. Output is deterministic."
        ),
        epilog="Example: waybook export session.jsonl --format openai --branches all --redact -o train.jsonl",
    )
    parser.add_argument("path", type=Path, metavar="PATH")
    common.add_store_option(parser)
    parser.add_argument("--format", choices=FORMATS, required=True)
    parser.add_argument(
        "--branches", default="active", metavar="active|all|LEAF", help="which branches (default active)"
    )
    parser.add_argument(
        "--pairs", action="store_true", help="preference pairs (chosen/rejected) from sibling branches"
    )
    parser.add_argument(
        "--redact", action="store_true", help="mask secrets (keys, tokens, private keys, URL passwords)"
    )
    parser.add_argument("--at", type=seq_arg, metavar="SEQ", help="export the session as it was at this seq")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="output file, or - for stdout")
    parser.set_defaults(run=guarded(run))


def run(args: argparse.Namespace) -> int:
    if args.format in ("archival", "pi") and (args.redact or args.pairs or args.branches != "active"):
        msg = (
            f"--format {args.format} exports the whole journal; --redact, --pairs and --branches do not apply"
        )
        raise UsageError(msg)
    if args.pairs and args.format != "openai":
        msg = "--pairs writes TRL preference rows in OpenAI message form; use it with --format openai"
        raise UsageError(msg)
    with open_journal(args.path, args.store) as journal:
        if args.format == "archival":
            count = _write(args.output, journal.read_lines(limit=args.at))
            warn(f"wrote {count} records to {args.output}")
            return OK
        if args.format == "pi":
            count = _write(args.output, export_pi(journal.read(limit=args.at)))
            warn(f"wrote {count} Pi lines to {args.output}")
            return OK
        tree = replay_with_progress(TreeProjection(), journal, at=args.at)
        exporter = TrajectoryExporter(journal, at=args.at, redact=args.redact, tree=tree)
        selection = Selection(args.branches)
        if args.branches not in ("active", "all") and args.branches not in exporter.tree.index:
            msg = f"--branches {args.branches!r}: not 'active', 'all' or a node of {args.path}"
            raise UsageError(msg)
        rows = exporter.pairs() if args.pairs else exporter.rows(args.format, selection)
        count = _write(args.output, (encode_row(row) for row in rows))
    what = "preference pairs" if args.pairs else "trajectories"
    warn(f"wrote {count} {what} to {args.output}")
    if exporter.redactor is not None:
        detail = ", ".join(f"{name}: {n}" for name, n in sorted(exporter.redactor.counts.items()))
        warn(f"masked {exporter.redactor.total} secrets" + (f" ({detail})" if detail else ""))
    return OK


def _write(output: str, lines: Iterable[bytes]) -> int:
    count = 0
    if output == "-":
        for line in lines:
            sys.stdout.buffer.write(line + b"\n")
            count += 1
        sys.stdout.flush()
        return count
    with open(output, "wb") as out:
        for line in lines:
            out.write(line + b"\n")
            count += 1
    return count
