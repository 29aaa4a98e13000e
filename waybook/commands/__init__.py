"""The `waybook` subcommands, one module each. Each module has `register(subparsers)`."""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands import (
    demo,
    diff,
    erase,
    export,
    forget,
    fork,
    gc,
    importing,
    label,
    langgraph,
    log,
    ls,
    memory,
    migrate,
    otel,
    repair,
    retain,
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
        langgraph,
        repair,
        erase,
        migrate,
        memory,
        ls,
        gc,
        forget,
        retain,
        search,
        view,
        serve,
        stats,
        otel,
        watch,
    ):
        module.register(commands)
