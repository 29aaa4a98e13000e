"""`waybook verify PATH...`: prove journals' digest chains and session rules.

Walk each journal's chain. Reports the first bad seq, its byte offset and why, and says whether a damaged tail
is torn (what `waybook repair` would remove). Memory receipts in the session and pin journals given are
re-derived from the memory journals given with them. With --store URL and no PATH, every journal of the store
is verified (hidden ones too), and its catalog journal _catalog with them; with --store, each journal's
sub-agent links are checked both ways (a link whose journal is missing or names another parent, a sub-agent
whose parent is missing or does not link back). Exit 1 on any problem.

Example: waybook verify sessions/*.jsonl --json; waybook verify --store file:sessions
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from waybook.commands.exits import OK, PROBLEM, USAGE, UsageError, warn
from waybook.commands.journal_files import EMPTY, check_journal_file, starts_with_header
from waybook.commands.progress import Phases
from waybook.commands.store_option import add_store_option, connect_store, store_errors
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import visible
from waybook.commands.verify_links import LinkCheck, links_entry
from waybook.commands.verify_receipts import needs_receipt_check, verify_receipts
from waybook.journal import JsonlJournal, SessionJournal, VerifyReport
from waybook.model import Header, JournalError, NotAJournalError, Record
from waybook.projections import LinkProblem
from waybook.stores import CATALOG_ID, JournalStore, count_journals, iter_journals, open_proven, prove


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "verify", __doc__)
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    add_store_option(parser, ids=f"each PATH (none: every journal, and the catalog {CATALOG_ID})")
    add_json_option(parser, "one JSON object per journal")
    parser.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar on stderr even when it is not a terminal (a terminal shows it anyway)",
    )
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
    if args.store is None:
        return _verify(args, None)
    with connect_store(args.store) as store:
        return _verify(args, store)


PROGRESS_PATHS = 20
"""Verifying at least this many files given by name shows a progress bar (on a terminal)."""


def _verify(args: argparse.Namespace, store: JournalStore | None) -> int:
    """Prove each journal once; the journals a receipt check needs stay open (their bytes in memory)
    until the receipts are checked, so no journal is read twice. A store's journals are listed a page at
    a time and each report is written as it is made: nothing is kept per journal of the store."""
    if args.paths or store is None:
        paths: Iterable[Path] = args.paths
        total = len(args.paths)
    else:
        with store_errors():
            total = count_journals(store, hidden=True) + 1  # and the catalog
        paths = every_journal(store)
    links = None if store is None else LinkCheck(store)
    status = OK
    reports = _Reports(streamed=args.json)
    with contextlib.ExitStack() as kept:
        receipts: list[SessionJournal] = []
        threshold = 2 if not args.paths else PROGRESS_PATHS
        try:
            with Phases(total, threshold=0 if args.progress else threshold, force=args.progress) as phases:
                phases.start("verifying", total=total)
                for done, path in enumerate(paths):
                    journal, found = _verify_one(args, store, path, reports, links)
                    status = max(status, found)
                    if journal is not None:
                        receipts.append(kept.enter_context(journal))
                    phases.advance(done + 1)
        finally:  # a store that fails partway still leaves a JSON array of what was verified
            reports.close()
        return max(status, verify_receipts(receipts, quiet=args.json, store=store))


class _Reports:
    """The `--json` reports, written as one JSON array an item at a time (emit_json's exact bytes),
    never held whole; without `streamed`, nothing is written."""

    def __init__(self, *, streamed: bool) -> None:
        self._streamed = streamed
        self._written = 0
        self._encode = json.JSONEncoder(sort_keys=True, ensure_ascii=sys.stdout.isatty()).encode

    def append(self, entry: dict[str, Any]) -> None:
        if self._streamed:
            sys.stdout.write(("[" if not self._written else ", ") + self._encode(entry))
            self._written += 1

    def close(self) -> None:
        if self._streamed:
            sys.stdout.write(("[" if not self._written else "") + "]\n")


def every_journal(store: JournalStore) -> Iterator[Path]:
    """Every journal id of `store`, hidden ones too, in creation order, and its catalog last: listed a
    page at a time."""
    with store_errors():
        for info in iter_journals(store, hidden=True):
            yield Path(info.journal_id)
    yield Path(CATALOG_ID)


def _proof(store: JournalStore | None, path: Path) -> tuple[SessionJournal | None, VerifyReport]:
    """One pass over a journal: it (read-only, its bytes kept) and the report of its proof."""
    if store is None:
        return JsonlJournal.open_proven(path, read_prefix=True)
    with store_errors():
        if str(path) == CATALOG_ID:
            return None, prove(store, CATALOG_ID)
        return open_proven(store, str(path))


def _verify_one(
    args: argparse.Namespace,
    store: JournalStore | None,
    path: Path,
    reports: _Reports,
    links: LinkCheck | None = None,
) -> tuple[SessionJournal | None, int]:
    """Verify one journal, print (or add to `reports`) what was found; the journal if the receipt check
    needs it (else it is closed), and the exit status."""
    try:
        if store is None:
            check_journal_file(path)
        journal, report = _proof(store, path)
    except JournalError as exc:
        warn(str(exc))
        return None, PROBLEM
    except UsageError as exc:  # --store: a bad id
        warn(str(exc))
        return None, USAGE
    except OSError as exc:  # a file that cannot be read: say so, and go on to the next
        warn(f"{exc.filename or path}: {exc.strerror or exc}")
        return None, USAGE
    if journal is None:
        return None, _say(args, store, path, report, journal, reports, links)
    with contextlib.ExitStack() as closing:
        closing.callback(journal.close)
        # with --store, the link and receipt checks share one read of the journal's records
        records = list(journal.read()) if report.ok and links is not None else None
        status = _say(args, store, path, report, journal, reports, links, records)
        if (report.ok or report.torn_tail) and needs_receipt_check(journal, records):
            closing.pop_all()  # the receipt check reads it: it stays open until then
            return journal, status
    return None, status


def _say(
    args: argparse.Namespace,
    store: JournalStore | None,
    path: Path,
    report: VerifyReport,
    journal: SessionJournal | None,
    reports: _Reports,
    links: LinkCheck | None = None,
    records: Sequence[Record] | None = None,
) -> int:
    """Print (or add to `reports`) what was found of one journal, its blobs too with --blobs, and (with
    --store) its sub-agent links checked both ways (from its `records`, where already read)."""
    status = OK
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
    empty = store is None and report.ok and report.records == 0  # a 0-byte file: no header, no journal
    entry["journal"] = not empty and (store is not None or report.bad_seq != 1 or starts_with_header(path))
    if empty:
        entry.update(ok=False, reason=EMPTY)
    if str(path) == CATALOG_ID:
        entry["torn_tail"] = False  # only the store writes its catalog: nothing for `repair` to do
    blobs = None
    if args.blobs and report.ok and store is not None and journal is not None:
        blobs = check_blobs(store, journal)
    if blobs is not None:
        entry["blobs"] = blobs
        if blobs["missing"] or blobs["damaged"]:
            status = max(status, PROBLEM)
    problems: tuple[LinkProblem, ...] = ()
    if report.ok and links is not None and journal is not None:
        facts, problems = links.check(str(path), journal.read() if records is None else records)
        entry["links"] = links_entry(facts, problems)
        if any(problem.is_problem for problem in problems):
            status = max(status, PROBLEM)
    warning = foreign_header(str(path), records) if store is not None and records else None
    if warning is not None:
        entry["warnings"] = [warning]
    reports.append(entry)
    if not entry["ok"]:
        status = max(status, PROBLEM)
    if not entry["journal"]:
        entry["torn_tail"] = False  # nothing to repair: there is no header to keep
        warn(str(NotAJournalError(path=str(path), reason=entry["reason"] or "")))
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
        for problem in problems:
            print(visible(f"  {'link' if problem.is_problem else 'note'}: {problem.message}"))
        if warning is not None:
            print(visible(f"  warning: {warning}"))
        if str(path) == CATALOG_ID and not report.ok:
            print("  the store's catalog is damaged: restore it from a copy; no command repairs it")
        elif entry["torn_tail"]:
            print(f"  `waybook repair {path}` would quarantine the bytes from byte {report.offset} on")
    return status


def foreign_header(journal_id: str, records: Sequence[Record]) -> str | None:
    """What verify says of a store's journal whose header names another journal (stored before a store
    refused that, or a directory store's file renamed): a warning, not a broken chain."""
    header = records[0].body
    if not isinstance(header, Header) or header.journal == journal_id:
        return None
    return (
        f"its header names journal {header.journal!r}, not {journal_id!r} (stored before stores refused "
        "that, or its file renamed); the chain is sound. A copy whose header names its own id: "
        f"`waybook migrate --store URL {journal_id} --to NEW_ID`"
    )


def check_blobs(store: JournalStore, journal: SessionJournal) -> dict[str, Any]:
    """Every blob the journal references: is it in the store, and do its bytes hash to its digest?"""
    from waybook.stores import BlobDigestError, MissingBlobError, references

    missing, damaged = [], []
    referenced = sorted(references(journal.read()))
    for digest in referenced:
        try:
            store.blobs.verify(digest)
        except MissingBlobError:
            missing.append(digest)
        except BlobDigestError:
            damaged.append(digest)
    return {"referenced": len(referenced), "missing": missing, "damaged": damaged}
