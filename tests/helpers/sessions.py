"""Deterministic sessions for export and CLI tests: fixed ids and a fixed clock, so output is golden.

Regenerate the golden exports with `python -m tests.helpers.sessions --write` only when a change to the
export format is intended, and say so in the commit.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path

from waybook._session import Session
from waybook.commands.demo import TOOLS
from waybook.journal import InMemoryJournal, SessionJournal
from waybook.model import ToolCallBlock

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "export"


def fixed_clock() -> Callable[[], str]:
    ticks = itertools.count()

    def clock() -> str:
        tick = next(ticks)
        return f"2026-12-01T09:{tick // 60:02d}:{tick % 60:02d}.000Z"

    return clock


def branching_session(journal: SessionJournal | None = None, *, journal_id: str = "golden") -> SessionJournal:
    """A tool-using session with an abandoned answer, a preferred retry, an exclusion and a compaction;
    its header names `journal_id`."""
    journal = journal if journal is not None else InMemoryJournal(journal_id)
    ids = (f"e{i:02d}" for i in itertools.count())
    session = Session.create(
        journal, journal_id=journal_id, metadata={"tools": TOOLS}, clock=fixed_clock(), ids=lambda: next(ids)
    )
    session.system("Be brief.")
    ask = session.user("What is in notes.txt? My token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB")
    session.assistant(
        [ToolCallBlock(call_id="t1", name="bash", arguments={"cmd": "cat notes.txt"})], stop_reason="tool_use"
    )
    session.tool_result("t1", "buy milk\ndb: postgres://admin:hunter2@db.internal/shop", tool_name="bash")
    session.assistant("It is a shopping note: buy milk.")
    session.branch_from(ask.id, reason="regenerate")
    session.assistant("I need to read the file first.", stop_reason="end_turn")
    follow = session.user("Fine. What else?")
    leaked = session.assistant("Also a database URL with a password.")
    session.exclude(leaked.id, reason="leaks a credential")
    session.compact("The user asked about notes.txt.", first_kept=follow.id)
    session.assistant("Nothing else.")
    return journal


def write_golden() -> None:
    from waybook.export.trajectories import Selection, TrajectoryExporter, encode_row

    GOLDEN.mkdir(parents=True, exist_ok=True)
    journal = branching_session()
    for name, rows in golden_exports(journal, TrajectoryExporter, Selection).items():
        (GOLDEN / name).write_bytes(b"".join(encode_row(r) + b"\n" for r in rows))


def golden_exports(journal: SessionJournal, exporter_cls: type, selection_cls: type) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    return {
        "openai-all.jsonl": list(exporter_cls(journal).rows("openai", selection_cls("all"))),
        "openai-active-redacted.jsonl": list(
            exporter_cls(journal, redact=True).rows("openai", selection_cls("active"))
        ),
        "sharegpt-all.jsonl": list(exporter_cls(journal).rows("sharegpt", selection_cls("all"))),
        "pairs.jsonl": list(exporter_cls(chosen_retry(journal)).pairs()),
    }


def chosen_retry(journal: SessionJournal) -> SessionJournal:
    """`journal` with the preferred retry (e07) labelled chosen, as `waybook label` records it."""
    from waybook.model import NewRecord
    from waybook.model._records import Annotation

    label = Annotation(target="e07", type="waybook.preference", data={"label": "chosen"})
    at = list(journal.read())[-1].at
    journal.append([NewRecord(id="label-e07", at=at, body=label)], expected=journal.head())
    return journal


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.helpers.sessions --write   (changes the golden export files)")
    write_golden()
