"""`--identity ID`: a memory command's journal named by the identity it belongs to (docs/memory.md).

The identity's working memory is the journal `memory:ID:working` of the store given by `--store URL`,
else of the default store in `$WAYBOOK_HOME` (waybook.memory.home). A read command never creates it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from waybook.commands.exits import UsageError


def add_identity_option(
    parser: argparse.ArgumentParser, *, what: str = "MEMORY.jsonl", default: Any = None
) -> None:
    """`--identity ID`. `default` is argparse.SUPPRESS on an action of `waybook memory`, so an identity
    given before the action is not overwritten (as with `--store`)."""
    parser.add_argument(
        "--identity",
        metavar="ID",
        default=default,
        help=(
            f"instead of {what}: the working memory of this identity (agent, project, user), in the store "
            "of --store URL or else the default store in $WAYBOOK_HOME"
        ),
    )


def resolve(args: argparse.Namespace, attr: str, *, what: str = "MEMORY.jsonl") -> None:
    """Set `args.<attr>` and `args.store` to the identity's working journal id and its store, when
    `--identity` is given; a usage error when both or neither of the journal and `--identity` are."""
    given = getattr(args, attr)
    identity = getattr(args, "identity", None)
    if identity is None:
        if given is None:
            msg = f"give {what} or --identity ID"
            raise UsageError(msg)
        return
    if given is not None:
        msg = f"give {what} or --identity ID, not both"
        raise UsageError(msg)
    from waybook.memory import RequestError
    from waybook.memory.tools import default_store_url, journal_ids

    try:
        ids = journal_ids(identity)
    except RequestError as exc:
        msg = f"--identity: {exc}"
        raise UsageError(msg) from None
    setattr(args, attr, Path(ids["working"]))
    if args.store is None:
        args.store = default_store_url()
