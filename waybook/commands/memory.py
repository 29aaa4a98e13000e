"""`waybook memory PATH`: memory files at a seq, and a file's revision history."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.common import USAGE, warn


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "memory",
        help="memory files and revision history (not available yet)",
        description="Show the memory files of a memory journal at a seq, and one file's revision history.",
        epilog="Example: waybook memory memory.jsonl --at 40 --history /memories/notes.md",
    )
    parser.add_argument("path", type=Path, metavar="PATH")
    parser.add_argument("--at", metavar="SEQ")
    parser.add_argument("--history", metavar="FILE")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    warn("memory journals are not supported by this version yet; memory views arrive with the memory port")
    return USAGE
