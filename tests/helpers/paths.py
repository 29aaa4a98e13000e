"""Where the tests find the checkout's files: its root, its fixtures and the shared fixtures beside it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SHARED_FIXTURES = ROOT.parent / "shared" / "fixtures"
DOCS = ROOT / "docs"
