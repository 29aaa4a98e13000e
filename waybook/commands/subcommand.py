"""How a sub-command declares its parser: its `--help` is the docstring of its code, written once.

The docstring (a command module's; a run function's where one module holds several commands) is laid
out for both readers. Its first paragraph is `USAGE`: HELP, the usage a reader of the code sees (argparse
writes its own) and the line `waybook --help` lists the command with. The paragraphs after it, up to the
one that starts with `Example:`, are the description `--help` shows, wrapped to the terminal; that
paragraph is the epilog `--help` ends with, one example a line as written (tests run the first as
written). What follows it is for readers of the code only.
"""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path
from typing import Any

import attrs

from waybook.commands.store_option import add_store_option

EXAMPLE = "Example:"
"""How the paragraph of a docstring that `--help` ends with begins."""

_USAGE_END = re.compile(r"^(?:[^`:]|`[^`]*`|:(?! ))*: ")
"""The usage of a synopsis paragraph and the `: ` after it: the first `: ` outside backquotes."""


@attrs.frozen
class CommandHelp:
    """What `--help` shows of a command, from its docstring; all None where Python runs without
    docstrings (`-OO`): the command still parses its options."""

    help: str | None
    description: str | None
    epilog: str | None


def command_help(doc: str | None) -> CommandHelp:
    """The help of a command whose docstring is `doc`, laid out as this module says."""
    if doc is None:
        return CommandHelp(None, None, None)
    paragraphs = [
        " ".join(p.split()) if n == 0 else p.strip()
        for n, p in enumerate(inspect.cleandoc(doc).split("\n\n"))
    ]
    usage = _USAGE_END.match(paragraphs[0])
    ends = [n for n, paragraph in enumerate(paragraphs) if paragraph.startswith(EXAMPLE)]
    if usage is None or not ends:
        msg = f"a command's docstring is `USAGE`: HELP, then a paragraph starting {EXAMPLE!r}: {doc[:80]!r}"
        raise ValueError(msg)
    end = ends[0]
    summary = paragraphs[0][usage.end() :].removesuffix(".")
    return CommandHelp(summary, "\n\n".join(paragraphs[1:end]) or None, paragraphs[end])


class CommandHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the examples keep their lines as written, never wrapped: a
    command wrapped across lines could not be pasted into a shell."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not text.startswith(EXAMPLE):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in text.splitlines())


def add_command(
    commands: argparse._SubParsersAction[Any],
    name: str,
    doc: str | None,
    *,
    help: str | None = None,
    usage: str | None = None,
) -> argparse.ArgumentParser:
    """The sub-command `name`, its help from `doc` (its code's docstring); `help` replaces the line the
    command is listed with, where two commands share one docstring; `usage` replaces argparse's usage."""
    text = command_help(doc)
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        usage=usage,
        help=text.help if help is None else help,
        description=text.description,
        epilog=text.epilog,
        formatter_class=CommandHelpFormatter,
    )
    return parser


def add_journal_command(
    commands: argparse._SubParsersAction[Any], name: str, doc: str | None
) -> argparse.ArgumentParser:
    """A sub-command on one journal: `PATH`, a journal file, or with `--store URL` a journal's id."""
    parser = add_command(commands, name, doc)
    parser.add_argument("path", type=Path, metavar="PATH")
    add_store_option(parser)
    return parser


def add_json_option(parser: argparse.ArgumentParser, what: str, *, default: Any = False) -> None:
    """`--json`, the same flag on every command: `what` says what it prints (one JSON document on stdout,
    or JSON lines); `default` is argparse.SUPPRESS where a sub-command's option must not overwrite its
    parent's."""
    parser.add_argument("--json", action="store_true", default=default, help=what)
