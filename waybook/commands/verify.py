"""`waybook verify PATH...`: walk each journal's chain and report the first bad record."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, USAGE, UsageError, warn
from waybook.commands.journal_files import starts_with_header
from waybook.commands.store_option import add_store_option, connect_store, verify_in_store
from waybook.commands.terminal import visible
from waybook.commands.verify_receipts import verify_receipts
from waybook.journal import JournalError, NotAJournalError, verify_file


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
    add_store_option(parser, ids="each PATH")
    parser.add_argument("--json", action="store_true", help="one JSON object per journal")
    parser.add_argument(
        "--blobs",
        action="store_true",
        help="also check that every blob the journals reference is in the store and matches its digest",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.blobs and args.store is None:
        warn("--blobs checks a store's blobs: give --store URL and journal ids")
        return USAGE
    status = OK
    reports = []
    for path in args.paths:
        if args.store is None and not path.is_file():
            warn(
                f"{path}: is a directory, not a journal file"
                if path.is_dir()
                else f"{path}: no such journal file"
            )
            status = max(status, USAGE)
            continue
        try:
            report = verify_file(path) if args.store is None else verify_in_store(args.store, str(path))
        except JournalError as exc:
            warn(str(exc))
            status = max(status, PROBLEM)
            continue
        except UsageError as exc:  # --store: a bad id or no store there
            warn(str(exc))
            status = max(status, USAGE)
            continue
        except OSError as exc:  # a file that cannot be read: say so, and go on to the next
            warn(f"{exc.filename or path}: {exc.strerror or exc}")
            status = max(status, USAGE)
            continue
        entry: dict[str, Any] = {
            "path": str(path),
            "ok": report.ok,
            "records": report.records,
            "head": {"seq": report.head.seq, "digest": report.head.digest},
            "bad_seq": report.bad_seq,
            "offset": report.offset,
            "reason": report.reason,
            "torn_tail": report.torn_tail,
        }
        entry["journal"] = args.store is not None or report.bad_seq != 1 or starts_with_header(path)
        blobs = check_blobs(args.store, str(path)) if args.blobs and report.ok else None
        if blobs is not None:
            entry["blobs"] = blobs
            if blobs["missing"] or blobs["damaged"]:
                status = max(status, PROBLEM)
        reports.append(entry)
        if not report.ok:
            status = max(status, PROBLEM)
        if not entry["journal"]:
            entry["torn_tail"] = False  # nothing to repair: there is no header to keep
            warn(str(NotAJournalError(path=str(path), reason=report.reason or "")))
            continue
        if not args.json:
            print(visible(str(report)))  # a reason can quote the file's bytes
            if blobs is not None:
                found = blobs
                print(
                    f"  blobs: {found['referenced']} referenced, {len(found['missing'])} missing, "
                    f"{len(found['damaged'])} damaged"
                )
                for digest in found["missing"]:
                    print(f"  missing blob {digest}")
                for digest in found["damaged"]:
                    print(f"  damaged blob {digest} (its bytes do not hash to its digest)")
            if entry["torn_tail"]:
                print(f"  `waybook repair {path}` would quarantine the bytes from byte {report.offset} on")
    if args.json:
        emit_json(reports)
    return max(status, verify_receipts(args.paths, quiet=args.json, store=args.store))


def check_blobs(url: str, journal_id: str) -> dict[str, Any]:
    """Every blob the journal references: is it in the store, and do its bytes hash to its digest?"""
    from waybook.stores._blobs import BlobDigestError, MissingBlobError, references

    missing, damaged = [], []
    with connect_store(url) as store, store.open(journal_id) as journal:
        referenced = sorted(references(journal.read()))
        for digest in referenced:
            try:
                store.blobs.verify(digest)
            except MissingBlobError:
                missing.append(digest)
            except BlobDigestError:
                damaged.append(digest)
    return {"referenced": len(referenced), "missing": missing, "damaged": damaged}
