"""The one report of `waybook import`, for every format: printed as text, or as one JSON object.

`--json` prints (sorted keys):

    {"format": "codex", "source": PATH, "ok": true,
     "lines": N, "mapped": N, "kept_verbatim": N, "skipped": N, "inferred": N,
     "skipped_lines": [{"journal": ID, "line": N, "reason": TEXT}, ...],
     "skipped_files": [{"file": PATH, "reason": TEXT}, ...],
     "warnings": [TEXT, ...],
     "journals": [{"journal": ID, "records": N, "held": N, "appended": N, "lines": N, "mapped": N,
                   "kept_verbatim": N, "skipped": N, "inferred": N}, ...]}

`held` counts the records a journal of the store held already (a session that grew since its last import),
`appended` the rest.

`inferred` is a count; with `--verbose` each journal also lists its notes as `inferred_notes`. A failure
with `--json` is also one object on stdout: `{"ok": false, "error": TEXT, "kind": NAME}` (plus `file` when
one file of the import is at fault), with the exit code the text form has.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import attrs

from waybook.commands.common import emit_json
from waybook.commands.exits import warn
from waybook.commands.terminal import plural
from waybook.formats import ImportReport


@attrs.frozen
class Written:
    journal: str
    records: int
    report: ImportReport
    held: int = 0
    """Records the journal held already (an import of a session that grew since): the rest were
    appended."""


def report_json(
    args: argparse.Namespace,
    written: Sequence[Written],
    *,
    skipped_files: Sequence[tuple[str, str]] = (),
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    journals = []
    for w in written:
        one: dict[str, Any] = {
            "journal": w.journal,
            "records": w.records,
            "held": w.held,
            "appended": w.records - w.held,
            "lines": w.report.lines,
            "mapped": w.report.mapped,
            "kept_verbatim": w.report.kept_verbatim,
            "skipped": len(w.report.skipped),
            "inferred": len(w.report.inferred),
        }
        if getattr(args, "verbose", False):
            one["inferred_notes"] = list(w.report.inferred)
        journals.append(one)
    return {
        "ok": True,
        "format": args.source,
        "source": str(args.path),
        "lines": sum(w.report.lines for w in written),
        "mapped": sum(w.report.mapped for w in written),
        "kept_verbatim": sum(w.report.kept_verbatim for w in written),
        "skipped": sum(len(w.report.skipped) for w in written),
        "inferred": sum(len(w.report.inferred) for w in written),
        "skipped_lines": [
            {"journal": w.journal, "line": n, "reason": why} for w in written for n, why in w.report.skipped
        ],
        "skipped_files": [{"file": f, "reason": why} for f, why in skipped_files],
        "warnings": list(warnings),
        "journals": journals,
    }


def say(
    args: argparse.Namespace,
    written: Sequence[Written],
    what: str,
    *,
    skipped_files: Sequence[tuple[str, str]] = (),
    warnings: Sequence[str] = (),
) -> None:
    """The import's report: one JSON object with --json, else lines on stderr."""
    if args.json:
        emit_json(report_json(args, written, skipped_files=skipped_files, warnings=warnings))
        return
    for w in written:
        report = w.report
        if not w.held:
            warn(f"imported {plural(w.records, 'record')} from {what} into {w.journal}")
        elif w.held == w.records:
            warn(f"{w.journal} is up to date: it holds all {plural(w.records, 'record')} of {what}")
        else:
            new = plural(w.records - w.held, "new record")
            warn(f"appended {new} from {what} to {w.journal} (it held the first {w.held})")
        warn(
            f"{report.lines} source lines: {report.mapped} mapped, {report.kept_verbatim} kept verbatim, "
            f"{len(report.skipped)} skipped, {len(report.inferred)} inferred"
            + ("" if getattr(args, "verbose", False) or not report.inferred else " (--verbose lists them)")
        )
        if getattr(args, "verbose", False):
            for note in report.inferred:
                warn(f"  inferred: {note}")
        if report.skipped:
            lines = ", ".join(str(n) for n, _ in report.skipped[:10])
            warn(f"skipped {plural(len(report.skipped), 'unparseable line')} (--lenient): {lines}")
    for file, why in skipped_files:
        warn(f"skipped {file} (--lenient): {why}")
    for text in warnings:
        warn(text)


def failure_json(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": False, "error": str(exc), "kind": type(exc).__name__}
    path = getattr(exc, "path", None)
    if path is not None:
        out["file"] = str(path)
    return out
