"""A command's `--help` is the docstring of its code (waybook.commands.subcommand), laid out once."""

from __future__ import annotations

import argparse
import re

import pytest

from tests.helpers.cli_runner import waybook
from waybook.commands.subcommand import CommandHelp, add_command, add_journal_command, command_help

DOC = """`waybook thing PATH [--fast]`: do the thing to a journal.

Do the thing: first this, then that.

And with --fast, less of it.

Example: waybook thing session.jsonl
         waybook thing --store file:sessions s-1 --fast

For readers of the code only: how the thing is done.
"""


def test_the_synopsis_gives_the_help_line_and_the_paragraphs_up_to_the_example_the_description() -> None:
    assert command_help(DOC) == CommandHelp(
        help="do the thing to a journal",
        description="Do the thing: first this, then that.\n\nAnd with --fast, less of it.",
        epilog="Example: waybook thing session.jsonl\n"
        "         waybook thing --store file:sessions s-1 --fast",
    )


def test_the_help_line_starts_after_the_first_colon_outside_backquotes() -> None:
    doc = (
        "`waybook m [show] PATH` (or `--store URL`): the default: `waybook m PATH` shows it.\n\nExample: m x"
    )
    assert command_help(doc).help == "the default: `waybook m PATH` shows it"


def test_a_function_docstring_is_read_as_a_module_docstring() -> None:
    def run() -> None:
        """`waybook thing PATH`: do the thing to a
        journal.

        Do the thing.

        Example: waybook thing session.jsonl
        """

    assert command_help(run.__doc__) == CommandHelp(
        "do the thing to a journal", "Do the thing.", "Example: waybook thing session.jsonl"
    )


def test_without_docstrings_a_command_still_parses_its_options() -> None:
    parser = argparse.ArgumentParser(prog="waybook")
    add_journal_command(parser.add_subparsers(), "thing", None).add_argument("--fast", action="store_true")
    args = parser.parse_args(["thing", "s.jsonl", "--store", "file:x", "--fast"])
    assert (str(args.path), args.store, args.fast) == ("s.jsonl", "file:x", True)


@pytest.mark.parametrize(
    "doc",
    [
        "`waybook thing PATH`: do the thing.\n\nDo it.",
        "waybook thing PATH does the thing.\n\nExample: waybook thing x",
    ],
    ids=["no example", "no usage"],
)
def test_a_docstring_out_of_the_layout_is_refused_when_the_command_is_declared(doc: str) -> None:
    with pytest.raises(ValueError, match="Example:"):
        add_command(argparse.ArgumentParser().add_subparsers(), "thing", doc)


def test_the_examples_keep_their_lines_and_the_description_is_wrapped() -> None:
    shown = add_command(argparse.ArgumentParser(prog="waybook").add_subparsers(), "thing", DOC).format_help()
    assert (
        "Example: waybook thing session.jsonl\n         waybook thing --store file:sessions s-1 --fast\n"
        in shown
    )
    assert "For readers of the code only" not in shown


def test_every_command_is_listed_with_its_help_line() -> None:
    listing = waybook("--help").stdout.split("commands:")[1]
    assert re.search(r"^    log +list records in commit order$", listing, flags=re.M)
    assert "None" not in listing
