"""A docstring or comment that names a file of this project names one that exists (issue 39.6).

Files move (the redaction corpus moved from tests/export/ to tests/helpers/secret_corpus.py) and the
sentences that point at them stay behind; this test reads every docstring and comment of the package,
the benches and the tests, and every line of the README and docs/, and checks each path it names under
one of the project's folders.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

NAMED_PATH = re.compile(r"(?<![\w/.-])((?:docs|tests|bench|scripts|waybook|examples|\.ci)/[\w./-]*\w)")
"""A path under one of the project's top folders, as prose names it (`docs/memory.md`, `tests/helpers/`)."""

SOURCES = ("waybook", "bench", "tests")
"""(scripts/runtime_suites names the files of the runtimes' own repositories it patches.)"""

OTHER_REPOSITORIES = {
    "tests/utils/simple_session.py": "openai/openai-agents-python (docs/openai-agents.md)",
    "docs/gen-ai/gen-ai-spans.md": "open-telemetry/semantic-conventions-genai (docs/otel.md)",
    "docs/gen-ai/gen-ai-agent-spans.md": "open-telemetry/semantic-conventions-genai (docs/otel.md)",
    "docs/gen-ai/gen-ai-input-messages.json": "open-telemetry/semantic-conventions-genai (docs/otel.md)",
}
"""Paths the docs name in another project's repository, each with that repository."""


def prose_of(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring and comment of a Python source."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                value = body[0].value.value
                if isinstance(value, str):
                    yield body[0].lineno, value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def named_paths(source: str) -> Iterator[tuple[int, str]]:
    yield from paths_in(prose_of(source))


def paths_in(texts: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for line, text in texts:
        for found in NAMED_PATH.finditer(text):
            path, after = found.group(1), text[found.end() : found.end() + 1]
            if not any(mark in path + after for mark in "*<{"):  # a pattern or a placeholder, not a file
                yield line, path.rstrip(".")


def python_files() -> list[Path]:
    return sorted(
        p for folder in SOURCES for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts
    )


def test_every_file_a_docstring_or_comment_names_exists() -> None:
    missing = [
        f"{file.relative_to(ROOT)}:{line}: {path}"
        for file in python_files()
        for line, path in named_paths(file.read_text())
        if not (ROOT / path).exists()
    ]
    assert missing == [], "these docstrings or comments name files that do not exist:\n" + "\n".join(missing)


def test_every_file_the_readme_or_a_doc_names_exists() -> None:
    missing = [
        f"{doc.relative_to(ROOT)}:{line}: {path}"
        for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for line, path in paths_in(enumerate(doc.read_text().splitlines(), start=1))
        if not (ROOT / path).exists() and path not in OTHER_REPOSITORIES
    ]
    assert missing == [], "these docs name files that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            '"""Every kind in tests/export/secret_corpus.py is masked."""\n',
            [(1, "tests/export/secret_corpus.py")],
        ),
        ("x = 1  # the rules: docs/security.md.\n", [(1, "docs/security.md")]),
        ('"""Files match bench/*.json, tests/test_*_contract.py or waybook/<name>.py."""\n', []),
    ],
)
def test_the_check_finds_a_path_in_a_docstring_or_a_comment(
    source: str, found: list[tuple[int, str]]
) -> None:
    assert list(named_paths(source)) == found
