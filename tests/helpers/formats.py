"""Shared by the foreign-format tests: the shared fixture files beside the checkout, and a journal of
records an importer produced."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from waybook.formats.pi import PiImport
from waybook.journal import InMemoryJournal
from waybook.model import GENESIS, NewRecord

SHARED_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
"""Real sessions of other agents (Pi, Claude Code, Codex), kept beside the checkout, not in it."""


def needs_shared(present: object) -> pytest.MarkDecorator:
    """Skip a test when the shared fixture files it reads (`present` is falsy) are not beside the checkout."""
    return pytest.mark.skipif(not present, reason="shared/fixtures is not beside this checkout")


def journal_of(records: Iterable[NewRecord], name: str = "imported") -> InMemoryJournal:
    """An in-memory journal holding `records` (as an importer returned them), appended as one batch."""
    journal = InMemoryJournal(name)
    journal.append(list(records), expected=GENESIS)
    return journal


def pi_journal(imported: PiImport, name: str = "imported") -> InMemoryJournal:
    """An in-memory journal of an imported Pi session, appended in the batches the import names (as
    `waybook import pi` appends them): a waybook export's batches come back, Pi's entries go alone."""
    journal = InMemoryJournal(name)
    for batch in imported.batches():
        journal.append(list(batch), expected=journal.head())
    return journal


def real_session_files() -> list[Path]:
    """Every real session file: the shared fixtures (Claude Code with sub-agents, Codex, Pi) and the
    checkout's own Pi files."""
    shared = sorted(SHARED_FIXTURES.rglob("*.jsonl")) if SHARED_FIXTURES.is_dir() else []
    own = sorted((Path(__file__).resolve().parents[2] / "fixtures" / "pi").glob("*.jsonl"))
    return [*shared, *own]


def real_session(path: Path) -> InMemoryJournal:
    """The journal an import of the real session file `path` gives (its agent told by its folder)."""
    from waybook.formats import import_claude_code, import_codex, import_pi

    importer = (
        import_codex if "codex" in path.parts else import_pi if "pi" in path.parts else import_claude_code
    )
    return journal_of(importer(path.read_bytes()).records, name=path.stem[:40] or "imported")
