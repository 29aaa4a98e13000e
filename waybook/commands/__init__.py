"""The `waybook` subcommands, one module each. Each module has `register(subparsers)`."""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands import (
    demo,
    diff,
    export,
    fork,
    gc,
    importing,
    label,
    log,
    ls,
    memory,
    otel,
    repair,
    search,
    serve,
    show,
    stats,
    tree,
    verify,
    view,
    watch,
)


def register_all(commands: argparse._SubParsersAction[Any]) -> None:
    for module in (
        demo,
        verify,
        tree,
        log,
        show,
        diff,
        export,
        fork,
        importing,
        label,
        repair,
        memory,
        ls,
        gc,
        search,
        view,
        serve,
        stats,
        otel,
        watch,
    ):
        module.register(commands)
