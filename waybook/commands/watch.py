"""`waybook watch [PATH...] [--store URL] [--once]`: follow agents' session files (Claude Code, Codex, Pi)
into a store as they grow.

Import every session under the folders watched into the store, and append what each session file gains as its
agent writes it: a journal equals what `waybook import` of the file as it is would write. With no PATH: Claude
Code's projects folder, Codex's sessions folder and Pi's sessions folder, each if present. A durable cursor
per file makes it safe to stop or kill at any moment and start again; a file truncated, rewritten or replaced
is imported again as a new journal (<id>.v2, ...) naming the one it replaces. See docs/watch.md.

Example: waybook watch --once
Example: waybook watch ~/.claude/projects --store file:audit

Each session file under the folders watched (by default the agents' own: Claude Code's projects, Codex's
sessions, Pi's sessions; waybook.commands.watch_sources) imports into a journal of the store named as
`waybook import` names it (Claude Code and Codex sessions by their session id, a Claude Code session's
sub-agents as `<session>.agent-<id>`), and every line added later is appended to it, so the journal always
equals what `waybook import` of the file as it is would write (waybook.commands.watch_follow). A durable
cursor per source (waybook.commands.watch_cursor) makes restarts cheap and a SIGKILL harmless.

Changes are noticed through the file system's notifications (the `watchfiles` package: inotify, FSEvents,
ReadDirectoryChangesW; `pip install 'waybook[watch]'`), else, or with `--poll`, by looking every few
seconds. `--once` imports what is there and stops (for cron).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, Final

from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.growth import bulk_url
from waybook.commands.store_option import URLS, create_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import plural
from waybook.commands.watch_cursor import Cursors
from waybook.commands.watch_follow import Context, Event, Follower
from waybook.commands.watch_sources import PEEK, Root, candidates, default_roots, format_of, is_subagent_file
from waybook.memory.tools import default_store_url, waybook_home
from waybook.stores import JournalStore

SETTLE: Final = 30.0
"""Seconds a session file must rest before the message it ends on is taken as finished."""
POLL: Final = 2.0
"""Seconds between looks when polling."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "watch", __doc__)
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="a folder of sessions, or one file"
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help=f"the store ({URLS}) to import into (default: the waybook home's, file:$WAYBOOK_HOME/store)",
    )
    parser.add_argument("--once", action="store_true", help="import what is there now, then stop (for cron)")
    parser.add_argument(
        "--settle",
        type=float,
        default=SETTLE,
        metavar="SECONDS",
        help="how long a file must rest before the message it ends on counts as finished "
        f"(default {SETTLE:g})",
    )
    parser.add_argument(
        "--poll",
        type=float,
        metavar="SECONDS",
        help="look for changes every SECONDS instead of through the file system's notifications",
    )
    parser.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="where the cursors are kept (default: $WAYBOOK_HOME/watch)",
    )
    parser.add_argument(
        "--lenient", action="store_true", help="skip lines that cannot be imported, as import does"
    )
    add_json_option(parser, "print each import as one JSON line on stdout")
    parser.add_argument(
        "--otel-endpoint",
        metavar="URL",
        help="also send each newly imported span to this OTLP/HTTP endpoint (as `waybook otel send`)",
    )
    parser.add_argument(
        "--otel-header", action="append", default=[], metavar="K=V", help="an HTTP header for --otel-endpoint"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.settle < 0 or (args.poll is not None and args.poll <= 0):
        msg = "--settle takes 0 or more seconds, --poll more than 0"
        raise UsageError(msg)
    roots = [Root(path) for path in args.paths] or default_roots()
    for root in roots:
        if not root.path.exists():
            msg = f"{root.path}: no such folder or file"
            raise UsageError(msg)
    if not roots:
        msg = (
            "no agent session folder here (looked for ~/.claude/projects, ~/.codex/sessions, "
            "~/.pi/agent/sessions); name one: waybook watch PATH"
        )
        raise UsageError(msg)
    url = args.store or default_store_url()
    state = (args.state or waybook_home() / "watch") / hashlib.sha256(url.encode()).hexdigest()[:16]
    otel = _otel_feed(args, url) if args.otel_endpoint else None
    with _only_watcher(state), create_store(bulk_url(url)) as store:
        if otel is not None:
            otel.store = store
        watcher = Watcher(
            roots,
            Context(store, Cursors(state), args.settle, lenient=args.lenient),
            report=_Report(args, url),
        )
        watcher.otel = otel
        if args.once:
            watcher.sync_all(every=True)
        else:
            watcher.run(poll=args.poll)
        watcher.close()
        if otel is not None:
            otel.close()
    return PROBLEM if watcher.failed() else OK


class Watcher:
    """The followers of every session found under the roots, and the loop that keeps them synced."""

    def __init__(
        self, roots: list[Root], context: Context, *, report: Callable[[Watcher, Event], None]
    ) -> None:
        self.roots = roots
        self.context = context
        self.report = report
        self.followers: dict[Path, Follower] = {}
        self.unknown: dict[Path, tuple[int, float]] = {}  # files of no format yet: (size, mtime) then
        self.stop = threading.Event()
        self.otel: _OtelFeed | None = None
        self.imported = 0

    def close(self) -> None:
        for follower in self.followers.values():
            follower.close()

    def failed(self) -> list[Follower]:
        return [f for f in self.followers.values() if f.failed is not None]

    # --- one round ------------------------------------------------------------------------------------

    def sync_all(self, *, every: bool = False) -> None:
        """Find the sessions under every root and sync each (all of them with `every`, else the ones whose
        file changed or settled since)."""
        for root in self.roots:
            for path in candidates(root.path):
                follower = self._follower(path, root.path)
                if follower is not None and (every or self._changed(follower)):
                    self._sync(follower)

    def sync_paths(self, changed: Iterable[Path]) -> None:
        """Sync the sessions the changed files belong to (a sub-agent's transcript: its session)."""
        todo: dict[Path, Follower] = {}
        for path in changed:
            root = self._root_of(path)
            if root is None or path.suffix != ".jsonl":
                continue
            if is_subagent_file(path, root):
                for follower in self.followers.values():
                    if follower.fmt == "claude-code" and _near(follower.path, path):
                        todo[follower.path] = follower
                continue
            found = self._follower(path, root)
            if found is not None:
                todo[path] = found
        for follower in todo.values():
            self._sync(follower)
        self.sync_settled()

    def sync_settled(self) -> None:
        """Sync the sessions whose file rested long enough since their last sync."""
        for follower in list(self.followers.values()):
            if follower.settled_open() or any(c.lane is None for c in follower.children.values()):
                self._sync(follower)

    def _sync(self, follower: Follower) -> None:
        events = follower.sync()
        for event in events:
            self.imported += event.appended
            self.report(self, event)
        if follower.failed is not None and events == [] and not getattr(follower, "_said", False):
            warn(follower.failed)
            follower._said = True  # type: ignore[attr-defined]
        if self.otel is not None and follower.journal is not None:
            fresh = {e.journal: e.head - e.appended for e in events if e.appended}
            if fresh:
                self.otel.send(follower.journal, fresh)

    def _follower(self, path: Path, root: Path) -> Follower | None:
        follower = self.followers.get(path)
        if follower is not None:
            return follower
        try:
            status = path.stat()
        except OSError:
            return None
        seen = (status.st_size, status.st_mtime)
        if self.unknown.get(path) == seen:
            return None
        fmt = format_of(path)
        if fmt is None:
            self.unknown[path] = seen
            if status.st_size > PEEK:
                self.unknown[path] = (-1, -1.0)  # no session: never looked at again
            return None
        self.unknown.pop(path, None)
        follower = Follower(path, fmt, self.context, inside=root if root.is_dir() else path.parent)
        self.followers[path] = follower
        return follower

    def _changed(self, follower: Follower) -> bool:
        try:
            status = follower.path.stat()
        except OSError:
            return False
        reader = follower.reader
        return (
            (status.st_size, status.st_mtime) != (reader.size, reader.mtime)
            or follower.settled_open()
            or any(c.lane is None for c in follower.children.values())
            or any(_child_changed(c) for c in follower.children.values())
        )

    def _root_of(self, path: Path) -> Path | None:
        for root in self.roots:
            if path == root.path or path.is_relative_to(root.path):
                return root.path
        return None

    # --- the loop -------------------------------------------------------------------------------------

    def run(self, *, poll: float | None) -> None:
        """Sync everything, then follow changes until SIGINT or SIGTERM."""
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.sync_all(every=True)
            changes = None if poll is not None else _notifications(self)
            if changes is None:
                self._poll(poll or POLL)
            else:
                for batch, changed in enumerate(changes):
                    if self.stop.is_set():
                        break
                    if batch == 0:  # notifications are live from the first batch: what changed before is
                        self.sync_all()  # seen by looking again (a file written during the first sync)
                    self.sync_paths(changed)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop.set()

    def _poll(self, every: float) -> None:
        while not self.stop.wait(every):
            self.sync_all()

    def tick(self) -> float:
        """How long the loop may sleep before a session could settle (between 0.05 s and 5 s)."""
        return min(max(self.context.settle / 2, 0.05), 5.0)


def _notifications(watcher: Watcher) -> Iterator[set[Path]] | None:
    """The changed paths under the roots, a set at a time (an empty set when the loop should look at
    settling sessions); None without the watchfiles package."""
    try:
        import watchfiles
    except ImportError:
        warn("watchfiles is not installed (pip install 'waybook[watch]'): looking for changes every 2 s")
        return None
    paths = [root.path for root in watcher.roots]
    tick = int(watcher.tick() * 1000)

    def each() -> Iterator[set[Path]]:
        for changes in watchfiles.watch(
            *paths,
            stop_event=watcher.stop,
            yield_on_timeout=True,
            rust_timeout=tick,
            debounce=200,
            step=20,
            raise_interrupt=False,
        ):
            yield {Path(path) for _, path in changes}

    return each()


def _near(session: Path, subagent: Path) -> bool:
    """Whether a sub-agent transcript may be the session's (in its folder, or in SESSION/subagents)."""
    return subagent.parent == session.parent or session.with_suffix("") in subagent.parents


def _child_changed(child: Any) -> bool:
    try:
        status = child.path.stat()
    except OSError:
        return False
    return (status.st_size, status.st_mtime) != (child.reader.size, child.reader.mtime)


class _only_watcher:  # noqa: N801 (a context manager read as a phrase)
    """One watcher a store: an exclusive lock on the state folder's `lock` file, held until the end."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.fd = -1

    def __enter__(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            msg = (
                f"another waybook watch follows sessions into this store (its cursors: {self.state}); "
                "stop it first"
            )
            raise UsageError(msg) from None

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class _Report:
    """The progress line on a terminal; a line per import otherwise; JSON lines with --json."""

    def __init__(self, args: argparse.Namespace, url: str) -> None:
        self.json = args.json
        self.url = url
        self.tty = sys.stderr.isatty() and not args.json

    def __call__(self, watcher: Watcher, event: Event) -> None:
        if self.json:
            out = {
                "source": event.source,
                "journal": event.journal,
                "appended": event.appended,
                "created": event.created,
                "replaces": event.replaces,
                "why": event.why,
            }
            sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
            sys.stdout.flush()
            return
        if event.why is not None:
            line = f"{Path(event.source).name}: {event.why}"
        else:
            verb = "new journal, " if event.created else "+"
            line = f"{event.journal}: {verb}{plural(event.appended, 'record')}"
        if self.tty:
            sessions = len(watcher.followers)
            now = time.strftime("%H:%M:%S")
            status = f"watching {plural(sessions, 'session')} into {self.url} · {now} {line}"
            sys.stderr.write("\r\x1b[2K" + status[: _width()])
            sys.stderr.flush()
        else:
            warn(line)


def _width() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns - 1
    except OSError:
        return 79


class _OtelFeed:
    """Sends, after each import, the spans its new records complete (a span is sent once, with the record
    that completes it; ids are derived from the journal, so a span sent again is one span). Spans the
    endpoint did not take are sent again with the next import."""

    def __init__(self, otel: Any, exporter: Any, endpoint: str) -> None:
        self.otel = otel
        self.exporter = exporter
        self.endpoint = endpoint
        self.store: JournalStore | None = None
        self.unsent: list[Any] = []

    def send(self, journal_id: str, fresh: dict[str, int]) -> None:
        """Send the spans of `journal_id` (with its sub-agents) whose record is after `fresh[journal]`,
        for each journal just appended to."""
        if self.store is None:
            return
        try:
            with self.store.open(journal_id) as journal:
                built = self.otel.spans_of(journal, store=self.store)
        except self.otel.OtelOptionError:
            return  # not a session journal
        spans = self.unsent + [
            span for each in built for span in each.spans if span.seq > fresh.get(span.journal, span.seq)
        ]
        self.unsent = []
        if not spans:
            return
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.exporter.export(self.otel.readable_spans(spans))
        except Exception as exc:  # the exporter reports a failure, never a bug of ours: keep the spans
            result, why = None, str(exc)
        else:
            why = "the endpoint did not take them"
        if result is not SpanExportResult.SUCCESS:
            self.unsent = spans
            lost = plural(len(spans), "span")
            warn(f"{journal_id}: {lost} not sent to {self.endpoint} ({why}); sent again with the next import")

    def close(self) -> None:
        if self.unsent:
            warn(f"{plural(len(self.unsent), 'span')} could not be sent to {self.endpoint}")
        self.exporter.shutdown()


def _otel_feed(args: argparse.Namespace, url: str) -> _OtelFeed:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        from waybook.export import otel
    except ImportError as exc:
        msg = f"--otel-endpoint needs OpenTelemetry: pip install 'waybook[otel]' ({exc})"
        raise UsageError(msg) from None
    headers = {}
    for item in args.otel_header:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            msg = f"--otel-header {item!r}: give NAME=VALUE"
            raise UsageError(msg)
        headers[key.strip()] = value
    try:
        endpoint = otel.traces_endpoint(args.otel_endpoint)
    except otel.OtelOptionError as exc:
        msg = f"--otel-{exc}"
        raise UsageError(msg) from None
    exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers or None, timeout=10)
    return _OtelFeed(otel, exporter, endpoint)
