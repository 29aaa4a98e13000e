"""The user's own redaction patterns, as `waybook export` and `waybook otel send` take them:
`--redact-pattern REGEX` (repeatable), then each line of `--redact-patterns FILE`."""

from __future__ import annotations

import argparse
from pathlib import Path

from waybook._redact import RedactPatternError, compile_patterns, read_patterns
from waybook.commands.exits import UsageError
from waybook.commands.input_files import read_text_file


def add_redact_pattern_options(parser: argparse.ArgumentParser, *, applies: str) -> None:
    """`--redact-pattern REGEX` and `--redact-patterns FILE`, which `redact_patterns(args)` reads;
    `applies` ends their help saying when they mask (`export`: they imply --redact)."""
    parser.add_argument(
        "--redact-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="also mask what this regular expression matches (its `secret` group if it has one); "
        f"repeatable; {applies}",
    )
    parser.add_argument(
        "--redact-patterns",
        type=Path,
        metavar="FILE",
        help="also mask what each line of FILE matches (one regular expression a line, # comments); "
        f"{applies}",
    )


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
