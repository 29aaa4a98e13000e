"""The plain corpus (issue 43): real code and prose that holds no secret, for counting redaction's false
positives: this checkout's sources, docs and benches, and every text of the real sessions in shared
fixtures (messages, thinking, tool calls' arguments, tool outputs).

Tests are left out (they plant secrets on purpose). What a line of the corpus holds that IS a secret's
shape on purpose (a documented example) is listed in `EXAMPLES`: masking it is right, not a false positive.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from tests.helpers.formats import SHARED_FIXTURES

ROOT: Final = Path(__file__).resolve().parents[2]
SOURCES: Final = ("waybook", "docs", "bench", "examples", "scripts")

EXAMPLES: Final = (
    "postgres://user:password@host",
    "redis://:password@host",
    "mysql://root:p@ss@db",
    "password=hunter2",
    "DB_PASSWORD: x",
    '"client_secret": "x"',
    "API_KEY=x",
    "auth_token=",
    "private_key: ",
    "credentials=",
    "sk-proj-",
    "AKIA",
    "app:hunter2@",  # bench/redact.py plants it
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",  # Stripe's documented test key (the demo session's)
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "`--password X`, `--token X`, `curl -u user:X`",  # docs/export.md's table of the kinds
)
"""Documented examples of secrets (docs/export.md's table): a line holding one may be masked."""


def source_lines() -> Iterator[tuple[str, str]]:
    """(where, line) for every line of this checkout's sources and docs."""
    for top in SOURCES:
        base = ROOT / top
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in (".py", ".md", ".sh", ".toml", ".txt", ".html", ".js", ".css", ".j2"):
                continue
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), start=1):
                yield f"{path.relative_to(ROOT)}:{number}", line
    readme = ROOT / "README.md"
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), start=1):
        yield f"README.md:{number}", line


def session_texts() -> Iterator[tuple[str, str]]:
    """(where, text) for every string of the real sessions in shared fixtures (their JSON values)."""
    if not SHARED_FIXTURES.is_dir():
        return
    for path in sorted(SHARED_FIXTURES.rglob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            for index, text in enumerate(_strings(value)):
                yield f"{path.relative_to(SHARED_FIXTURES)}:{number}#{index}", text


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) > 2:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def texts() -> Iterator[tuple[str, str]]:
    """Everything in the corpus: (where, text); `lines(text)` counts its lines."""
    yield from source_lines()
    yield from session_texts()


def line_count(text: str) -> int:
    return text.count("\n") + 1


def documented_example(text: str) -> bool:
    return any(example in text for example in EXAMPLES)
