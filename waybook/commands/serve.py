"""`waybook serve --store URL [--host H] [--port N]`: serve a read-only web UI over a store's journals.

Serve the journals of a store as web pages: the journal list, and each session's page (as `waybook view`
writes it) following the store's feed, so new records appear as they commit. Read-only: nothing served can
change a journal. Binds 127.0.0.1 unless --host says otherwise.

Example: waybook serve --store file:sessions --port 8470
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Any

from waybook.commands.exits import OK, UsageError
from waybook.commands.store_option import add_store_option, store_errors
from waybook.commands.subcommand import add_command
from waybook.view import ViewServer

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "serve", __doc__)
    add_store_option(parser, ids=None, required=True)
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8470, help="the port (default 8470; 0 picks a free one)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.port <= 65535:
        msg = f"--port {args.port}: give a port from 0 to 65535"
        raise UsageError(msg)
    try:
        with store_errors():
            server = ViewServer(args.store, host=args.host, port=args.port)
    except OSError as exc:
        msg = (
            f"--host {args.host} --port {args.port}: cannot listen there ({exc.strerror}); try another --port"
        )
        raise UsageError(msg) from None
    if args.host not in LOOPBACK:
        print(f"waybook: --host {args.host} makes the sessions readable from other machines", file=sys.stderr)
    print(f"serving {args.store} at {server.url_for()} (read-only; Ctrl-C stops)", flush=True)
    # What the process holds now (modules, classes, the store's code) lives as long as it does: kept
    # out of the cyclic collector, a full collection scans only what connections made, and pauses the
    # one serving thread for milliseconds instead of the 0.3-0.5 s measured with 4,000 connections.
    gc.freeze()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return OK
