"""The `waybook` subcommands, one module each. Each module has `register(subparsers)`."""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands import verify


def register_all(commands: argparse._SubParsersAction[Any]) -> None:
    for module in (verify,):
        module.register(commands)
