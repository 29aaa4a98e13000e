"""The user's own redaction patterns, as `waybook export` and `waybook otel send` take them:
`--redact-pattern REGEX` (repeatable), then each line of `--redact-patterns FILE`."""

from __future__ import annotations

import argparse

from waybook._redact import RedactPatternError, compile_patterns, read_patterns
from waybook.commands.exits import UsageError
from waybook.commands.input_files import read_text_file


def redact_patterns(args: argparse.Namespace) -> list[str]:
    """--redact-pattern, then --redact-patterns FILE's lines, each compiled first: a bad one is a usage
    error naming the flag (and the file) it came from."""
    given: list[tuple[str, list[str]]] = [("--redact-pattern", list(args.redact_pattern))]
    if args.redact_patterns is not None:
        text = read_text_file(args.redact_patterns, flag="--redact-patterns")
        given.append((f"--redact-patterns {args.redact_patterns}", read_patterns(text)))
    for flag, patterns in given:
        try:
            compile_patterns(patterns)
        except RedactPatternError as exc:
            msg = f"{flag}: {exc}"
            raise UsageError(msg) from None
    return [pattern for _, patterns in given for pattern in patterns]
