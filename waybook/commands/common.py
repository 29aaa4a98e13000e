"""Helpers shared by CLI commands: output streams, JSON output, and opening journals for reading."""

from __future__ import annotations

import json
import sys
from typing import Any

OK, PROBLEM, USAGE = 0, 1, 2


def emit_json(value: Any) -> None:
    """One JSON document on stdout (sorted keys, so output is stable for scripts and tests)."""
    sys.stdout.write(json.dumps(value, sort_keys=True, ensure_ascii=False) + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"waybook: {message}\n")
