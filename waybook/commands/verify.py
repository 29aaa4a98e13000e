"""`waybook verify PATH...`: walk each journal's chain and report the first bad record."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.common import OK, PROBLEM, USAGE, emit_json, warn
from waybook.commands.verify_receipts import verify_receipts
from waybook.journal import JournalError, verify_file


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "verify",
        help="prove journals' digest chains and session rules",
        description=(
            "Walk each journal's chain. Reports the first bad seq, its byte offset and why, and says "
            "whether a damaged tail is torn (what `waybook repair` would remove). Memory receipts in the "
            "session and pin journals given are re-derived from the memory journals given with them. "
            "Exit 1 on any problem."
        ),
        epilog="Example: waybook verify sessions/*.jsonl --json",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    parser.add_argument("--json", action="store_true", help="one JSON object per journal")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    status = OK
    reports = []
    for path in args.paths:
        if not path.is_file():
            warn(f"{path}: no such journal file")
            status = max(status, USAGE)
            continue
        try:
            report = verify_file(path)
        except JournalError as exc:
            warn(str(exc))
            status = max(status, PROBLEM)
            continue
        entry = {
            "path": str(path),
            "ok": report.ok,
            "records": report.records,
            "head": {"seq": report.head.seq, "digest": report.head.digest},
            "bad_seq": report.bad_seq,
            "offset": report.offset,
            "reason": report.reason,
            "torn_tail": report.torn_tail,
        }
        reports.append(entry)
        if not report.ok:
            status = max(status, PROBLEM)
        if not args.json:
            print(report)
            if entry["torn_tail"]:
                print(f"  `waybook repair {path}` would quarantine the bytes from byte {report.offset} on")
    if args.json:
        emit_json(reports)
    return max(status, verify_receipts(args.paths, quiet=args.json))
