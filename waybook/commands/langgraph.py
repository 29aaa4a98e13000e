"""`waybook langgraph derive --store URL [JOURNAL_ID ...]`: append the session nodes of checkpoints saved
without them.

Each checkpoint saved without nodes gains its new messages as session nodes, appended after what the
journal holds (one append per thread; nothing is rewritten), exactly where today's saver would have
put them (docs/langgraph.md). Without ids, every LangGraph thread in the store. A thread that needs
nothing is left as it is, so running it twice writes nothing the second time. Needs the langgraph
extra (the values are read by the saver's strict serializer).

Example: waybook langgraph derive --store file:checkpoints

This gives threads saved before `WaybookSaver` wrote session nodes their nodes, so `show`, `stats`,
`export`, `search` and `view` read them.
"""

from __future__ import annotations

import argparse
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, UsageError, warn
from waybook.commands.store_option import add_store_option, connect_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import plural
from waybook.integrations.errors import MissingExtraError
from waybook.stores import JournalStore


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(
        commands,
        "langgraph",
        __doc__,
        help="LangGraph threads: derive the session nodes of threads saved before WaybookSaver wrote them",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    derive = add_command(actions, "derive", __doc__)
    derive.add_argument("journals", nargs="*", metavar="JOURNAL_ID", help="threads' journals (default: all)")
    add_store_option(derive, ids=None, required=True)
    add_json_option(derive, "print what each thread gained as JSON")
    derive.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        from waybook.integrations.langgraph import WaybookSaver
    except MissingExtraError as exc:
        raise UsageError(str(exc)) from exc
    store = connect_store(args.store)
    try:
        threads = _threads(store)
        unknown = [j for j in args.journals if j not in threads]
        if unknown:
            msg = (
                f"--store {args.store} holds no LangGraph thread {unknown[0]!r}; "
                "`waybook ls --store URL` lists its journals (omit the ids to derive every thread)"
            )
            raise UsageError(msg)
        chosen = args.journals or list(threads)
        gained: dict[str, int] = {}
        with WaybookSaver(store) as saver:
            for journal_id in chosen:
                meta = threads[journal_id]
                gained[journal_id] = saver.derive_sessions(
                    meta.get("thread_id"), str(meta.get("checkpoint_ns", ""))
                )
    finally:
        store.close()
    if args.json:
        emit_json({"derived": gained})
    else:
        done = {j: n for j, n in gained.items() if n}
        for journal_id, n in done.items():
            warn(f"{journal_id}: {plural(n, 'checkpoint')} gained session nodes")
        warn(f"{plural(len(done), 'thread')} of {len(gained)} derived; the others needed nothing")
    return OK


def _threads(store: JournalStore) -> dict[str, dict[str, Any]]:
    """journal id -> header metadata, for every LangGraph thread's journal in the store."""
    found: dict[str, dict[str, Any]] = {}
    after: str | None = None
    while True:
        page = store.list(role="session", metadata={"runtime": "langgraph"}, after=after, limit=500)
        found.update((info.journal_id, dict(info.metadata)) for info in page.journals)
        if page.cursor is None:
            return found
        after = page.cursor
