"""An MCP server for memory tools: how untrusted agent code reaches memory from outside the host process.

A Python object is not a sandbox, so code the host does not trust (a model's tool runner, a plugin)
must not run in the process that holds the authority's host face. It talks to this server over stdio
instead. The server exposes the Memory port's commands as the `memory` tool and the agent face's
`remember`, `query`, `explain` and `nominate`; the host face (advancing the pin, adopting nominations) is
never exposed. Nominations made through the server are kept in `MemoryToolServer.nominations` for the
host code that runs the server.

Run it: `python -m waybook.integrations.mcp --working W.jsonl --canonical C.jsonl --pins P.jsonl
--route team:facts` (the `mcp` extra: `pip install 'waybook[mcp]'`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from waybook._masking import Redact, SecretMask, secret_mask
from waybook.journal import JsonlJournal, SessionJournal
from waybook.memory import Memory, Route, create_authority
from waybook.memory.canonical import AgentFace, Nomination
from waybook.memory.working import MemoryProjection
from waybook.model import InvalidArgumentError, JournalError
from waybook.projections import replay

AGENT_TOOLS = ("remember", "query", "explain", "nominate")
_WRITTEN_TEXTS = ("text", "old_text", "new_text", "patch", "description")
"""The `memory` tool's arguments that hold text a call writes (or matches, for old_text and a patch)."""


def _plain(value: Any) -> Any:
    """JSON-able data of a frozen value (attrs classes, heads)."""
    return msgspec.to_builtins(value)


class MemoryToolServer:
    """The memory tools over MCP for one Memory port and one agent face (the host face stays out)."""

    def __init__(
        self,
        memory: Memory,
        agent: AgentFace,
        *,
        name: str = "waybook-memory",
        debug: bool = False,
        redact: Redact = False,
    ) -> None:
        """`debug=True` prints the traceback of a failing call on stderr; without it a call that fails
        returns its typed error to the client (`CODE: message`) and the server prints nothing more.
        `redact` masks secrets in the texts a call writes (a file's text, an edit's old and new text, a
        patch, a description, `remember`'s values) before memory stores them: True with the built-in
        detector (the one `export --redact` uses), or a list of extra regular expressions to mask too (as
        `Session`'s). An edit's old text and a patch are masked too, so they match the masked file."""
        mask = secret_mask(redact, who="MemoryToolServer")
        from mcp.server.mcpserver import MCPServer  # the `mcp` extra, imported only when serving
        from mcp.server.mcpserver.exceptions import ToolError
        from pydantic import ValidationError

        class Server(MCPServer):
            """Arguments of the wrong type answered in one line (`InvalidArgument: request_id: ...`), as
            waybook's own errors are, instead of pydantic's text of several lines."""

            async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
                try:
                    return await super().call_tool(name, arguments, context)
                except ToolError as exc:
                    if not isinstance(exc.__cause__, ValidationError):
                        raise
                    msg = f"Error executing tool {name}: InvalidArgument: {_wrong_arguments(exc.__cause__)}"
                    raise ToolError(msg) from exc.__cause__

        self.nominations: dict[str, Nomination] = {}

        @contextlib.contextmanager
        def typed() -> Iterator[None]:
            """A failure as the client reads it: the waybook error's class as a code, and its message."""
            try:
                yield
            except Exception as exc:
                if debug:
                    traceback.print_exc(file=sys.stderr)
                message = " ".join(str(exc).split())
                if isinstance(exc, JournalError):
                    msg = f"{type(exc).__name__}: {message}"
                    raise ToolError(msg) from None
                if isinstance(exc, (TypeError, ValueError)):  # arguments the schema let through
                    msg = f"InvalidArgument: {message}"
                    raise ToolError(msg) from None
                msg = f"InternalError: {type(exc).__name__} (run the server with --debug for its traceback)"
                raise ToolError(msg) from None

        server = Server(
            name,
            # The library logs every failed call at INFO on stderr; a refusal is the client's answer,
            # not the host's news: quiet unless --debug.
            log_level="INFO" if debug else "WARNING",
            instructions=(
                "Working memory under /memories (the `memory` tool: view, create, str_replace, insert, "
                "delete, rename, apply_patch, update_description) and canonical memory the host "
                "reviewed (remember, query, explain, nominate). Nominating proposes records; only the "
                "host adopts them."
            ),
        )

        @server.tool(name="memory", description="Run one memory file command; returns the port's Result.")
        def memory_tool(
            command: str,
            path: str | None = None,
            text: str | None = None,
            old_text: str | None = None,
            new_text: str | None = None,
            insert_line: int | None = None,
            view_range: list[int] | None = None,
            old_path: str | None = None,
            new_path: str | None = None,
            patch: str | None = None,
            description: str | None = None,
            call_id: str | None = None,
        ) -> dict[str, Any]:
            fields = {
                "command": command,
                "path": path,
                "text": text,
                "old_text": old_text,
                "new_text": new_text,
                "insert_line": insert_line,
                "view_range": view_range,
                "old_path": old_path,
                "new_path": new_path,
                "patch": patch,
                "description": description,
            }
            given = {k: v for k, v in fields.items() if v is not None}
            if mask is not None:
                given.update({k: mask.value(given[k]) for k in _WRITTEN_TEXTS if k in given})
            with typed():
                return memory.execute(given, call_id=call_id).as_dict()

        @server.tool(
            name="remember", description="Write puts and tombstones to working memory, idempotently."
        )
        def remember(
            request_id: str, puts: dict[str, str], tombstones: list[str] | None = None
        ) -> dict[str, Any]:
            if mask is not None:
                puts = {key: mask.value(value) for key, value in puts.items()}
            with typed():
                return _plain(agent.remember(request_id, puts, tombstones or ()))  # type: ignore[no-any-return]

        @server.tool(name="query", description="Read canonical memory at the pinned head.")
        def query(keys: list[str] | None = None, prefix: str | None = None) -> dict[str, Any]:
            with typed():
                return _plain(agent.query(keys, prefix=prefix))  # type: ignore[no-any-return]

        @server.tool(name="explain", description="Why canonical memory holds what it holds for a key.")
        def explain(key: str | None = None, handle: int | None = None) -> dict[str, Any]:
            with typed():
                return _plain(agent.explain(key, handle=handle))  # type: ignore[no-any-return]

        @server.tool(name="nominate", description="Propose working-memory records for canonical memory.")
        def nominate(keys: list[str], route: str, purpose: str) -> dict[str, Any]:
            with typed():
                nomination = agent.nominate(keys, route, purpose)
            self.nominations[nomination.digest] = nomination
            return {
                "digest": nomination.digest,
                "route": nomination.route,
                "purpose": nomination.purpose,
                "keys": list(nomination.keys),
                "source_head": _plain(nomination.source_head),
            }

        self.server = server

    def run_stdio(self) -> None:
        self.server.run("stdio")


def _wrong_arguments(error: Any) -> str:
    """pydantic's validation errors in one line: `request_id: Input should be a valid string (got int)`."""
    parts = []
    for problem in error.errors(include_url=False)[:5]:
        where = ".".join(str(p) for p in problem.get("loc", ())) or "arguments"
        given = type(problem.get("input")).__name__
        parts.append(f"{where}: {' '.join(str(problem.get('msg', 'invalid')).split())} (got {given})")
    return "; ".join(parts)


def _scope(journal: SessionJournal) -> str:
    state = replay(MemoryProjection(), journal)
    return state.scope or "working-memory"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m waybook.integrations.mcp", description="Serve memory tools over MCP (stdio)."
    )
    parser.add_argument("--working", required=True, help="the working-memory journal (JSONL)")
    parser.add_argument("--canonical", required=True, help="the canonical-memory journal (JSONL)")
    parser.add_argument("--pins", required=True, help="the pin journal the authority records its pin in")
    parser.add_argument("--route", action="append", default=[], metavar="NAME:PURPOSE", help="a route")
    parser.add_argument("--actor", default="host:mcp", help="the actor named in adoptions")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of a failing tool call on stderr"
    )
    parser.add_argument(
        "--redact", action="store_true", help="mask secrets in what a call writes before memory stores it"
    )
    parser.add_argument(
        "--redact-pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="a regular expression to mask too (repeatable; implies --redact)",
    )
    args = parser.parse_args(argv)
    try:
        mask = SecretMask(args.redact_pattern) if args.redact or args.redact_pattern else None
    except InvalidArgumentError as exc:
        print(f"waybook mcp: --redact-pattern: {exc}", file=sys.stderr, flush=True)
        return 2
    routes: dict[str, set[str]] = {}
    for spec in args.route:
        name, _, purpose = spec.partition(":")
        routes.setdefault(name, set()).add(purpose)
    working, canonical, pins = (
        JsonlJournal(args.working),
        JsonlJournal(args.canonical),
        JsonlJournal(args.pins),
    )
    try:
        authority = create_authority(
            working=working,
            canonical=canonical,
            routes=[Route(name, frozenset(purposes)) for name, purposes in routes.items()],
            actor=args.actor,
            pins=pins,
        )
        memory = Memory(working, scope=_scope(working))
        MemoryToolServer(memory, authority.agent, debug=args.debug, redact=mask or False).run_stdio()
    except JournalError as exc:
        print(f"waybook mcp: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        for journal in (working, canonical, pins):
            journal.close()
    return 0


__all__ = ["AGENT_TOOLS", "MemoryToolServer", "main"]


if __name__ == "__main__":
    raise SystemExit(main())
