"""`waybook verify PATH...`: walk each journal's chain and report the first bad record."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, USAGE, UsageError, warn
from waybook.commands.journal_files import starts_with_header
from waybook.commands.progress import Phases
from waybook.commands.store_option import add_store_option, connect_store, verify_in_store
from waybook.commands.terminal import visible
from waybook.commands.verify_receipts import verify_receipts
from waybook.journal import JournalError, NotAJournalError, VerifyReport, verify, verify_file
from waybook.stores import CATALOG_ID


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "verify",
        help="prove journals' digest chains and session rules",
        description=(
            "Walk each journal's chain. Reports the first bad seq, its byte offset and why, and says "
            "whether a damaged tail is torn (what `waybook repair` would remove). Memory receipts in the "
            "session and pin journals given are re-derived from the memory journals given with them. "
            "With --store URL and no PATH, every journal of the store is verified (hidden ones too), and "
            f"its catalog journal {CATALOG_ID} with them. Exit 1 on any problem."
        ),
        epilog="Example: waybook verify sessions/*.jsonl --json; waybook verify --store file:sessions",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    add_store_option(parser, ids=f"each PATH (none: every journal, and the catalog {CATALOG_ID})")
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
    if not args.paths and args.store is None:
        warn("give the journal files to verify (PATH...), or --store URL to verify every journal of a store")
        return USAGE
    paths = args.paths or every_journal(args.store)
    status = OK
    reports: list[dict[str, Any]] = []
    with Phases(len(paths), threshold=2 if not args.paths else PROGRESS_PATHS) as phases:
        phases.start("verifying", total=len(paths))
        for done, path in enumerate(paths):
            status = max(status, _verify_one(args, path, reports))
            phases.advance(done + 1)
    if args.json:
        emit_json(reports)
    ids = [p for p in paths if str(p) != CATALOG_ID]
    return max(status, verify_receipts(ids, quiet=args.json, store=args.store))


PROGRESS_PATHS = 20
"""Verifying at least this many files given by name shows a progress bar (on a terminal)."""


def every_journal(url: str) -> list[Path]:
    """Every journal id of the store at `url`, hidden ones too, in creation order, and its catalog last."""
    from waybook.stores import StoreArgumentError

    ids: list[Path] = []
    with connect_store(url) as store:
        cursor = None
        while True:
            try:
                page = store.list(hidden=True, after=cursor, limit=1000)
            except StoreArgumentError as exc:
                raise UsageError(str(exc)) from exc
            ids.extend(Path(info.journal_id) for info in page)
            cursor = page.cursor
            if cursor is None:
                break
    return [*ids, Path(CATALOG_ID)]


def verify_catalog(url: str) -> VerifyReport:
    """Prove the store's catalog journal: a directory store's file as any JSONL file, other stores through
    the read-only `open_catalog` of their base classes."""
    from waybook.stores import DirectoryStore

    with connect_store(url) as store:
        if isinstance(store, DirectoryStore):
            return verify_file(store.directory / "catalog.jsonl")
        opener = getattr(store, "open_catalog", None)
        if opener is None:
            msg = f"{url}: this store cannot show its catalog journal {CATALOG_ID} to be verified"
            raise UsageError(msg)
        with opener() as catalog:
            report: VerifyReport = verify(catalog)
            return report


def _verify_one(args: argparse.Namespace, path: Path, reports: list[dict[str, Any]]) -> int:
    """Verify one journal, print (or add to `reports`) what was found; its exit status."""
    status = OK
    if args.store is None and not path.is_file():
        warn(
            f"{path}: is a directory, not a journal file"
            if path.is_dir()
            else f"{path}: no such journal file"
        )
        return USAGE
    try:
        report = _report(args.store, path)
    except JournalError as exc:
        warn(str(exc))
        return PROBLEM
    except UsageError as exc:  # --store: a bad id or no store there
        warn(str(exc))
        return USAGE
    except OSError as exc:  # a file that cannot be read: say so, and go on to the next
        warn(f"{exc.filename or path}: {exc.strerror or exc}")
        return USAGE
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
    if str(path) == CATALOG_ID:
        entry["torn_tail"] = False  # only the store writes its catalog: nothing for `repair` to do
    wanted = args.blobs and report.ok and str(path) != CATALOG_ID
    blobs = check_blobs(args.store, str(path)) if wanted else None
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
        return status
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
        if str(path) == CATALOG_ID and not report.ok:
            print("  the store's catalog is damaged: restore it from a copy; no command repairs it")
        elif entry["torn_tail"]:
            print(f"  `waybook repair {path}` would quarantine the bytes from byte {report.offset} on")
    return status


def _report(store: str | None, path: Path) -> VerifyReport:
    if store is None:
        return verify_file(path)
    if str(path) == CATALOG_ID:
        return verify_catalog(store)
    return verify_in_store(store, str(path))


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
