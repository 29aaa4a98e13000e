"""`waybook otel send PATH|--store URL [ID...] --endpoint URL`: send journals as traces to an OTLP/HTTP
endpoint.

Send session journals as OpenTelemetry traces following the GenAI semantic conventions: an invoke_agent
span per turn, a chat span per model call (model, token usage, finish reason), an execute_tool span per
tool call; sub-agent journals as child spans of the tool call that started them (found in the store, or
beside the journal file as ID.jsonl). Span and trace ids are derived from the journal, so sending again
sends the same ids. Message content is not sent unless --content says so, and is then masked like
`waybook export --redact`. Needs the otel extra: pip install 'waybook[otel]'. See docs/otel.md.

Example: waybook otel send --store file:sessions SESSION_ID --endpoint http://127.0.0.1:4318

The mapping and the sending are `waybook.export.otel`'s; this module reads the options, opens the
journals (one function, `_open`, for a journal of a store), and says what was sent.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from waybook._redact import RedactPatternError
from waybook.commands.common import emit_json, open_journal, seq_arg
from waybook.commands.exits import OK, UsageError, warn
from waybook.commands.redact_patterns import add_redact_pattern_options, redact_patterns
from waybook.commands.store_option import add_store_option, connect_store, open_in_store
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import plural
from waybook.journal import SessionJournal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from waybook.export.otel import OtelOptions, SendReport
    from waybook.stores import JournalStore

CONTENT = ("none", "metadata", "full")
TRACES = ("turn", "session")


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "otel", _no_subcommand.__doc__)
    parser.set_defaults(run=_no_subcommand)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    send = add_command(sub, "send", __doc__)
    send.add_argument("path", nargs="?", metavar="PATH", help="a journal file, or with --store a journal id")
    send.add_argument("ids", nargs="*", metavar="ID", help="more journal ids of the --store")
    add_store_option(send, ids="PATH (and each ID)", detail="; with no id, every session journal of it")
    send.add_argument(
        "--endpoint",
        metavar="URL",
        help="the OTLP/HTTP endpoint (http://HOST:PORT adds /v1/traces; a URL with a path is used as given)",
    )
    send.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K=V",
        help="an HTTP header for the endpoint (authentication); repeatable",
    )
    send.add_argument(
        "--content",
        choices=CONTENT,
        default="none",
        help="none (default): no message text; metadata: roles, part types and sizes, argument names; "
        "full: messages, tool arguments and results (the GenAI opt-in content attributes), redacted",
    )
    send.add_argument(
        "--traces", choices=TRACES, default="turn", help="one trace per user turn (default) or per session"
    )
    send.add_argument(
        "--since", type=seq_arg, default=0, metavar="SEQ", help="send only the spans of records after SEQ"
    )
    add_redact_pattern_options(send, applies="only with --content metadata or full")
    send.add_argument(
        "--provider", metavar="NAME", help="gen_ai.provider.name (default: guessed from each model's name)"
    )
    send.add_argument(
        "--service-name", default="waybook", metavar="NAME", help="service.name (default waybook)"
    )
    send.add_argument(
        "--timeout", type=float, default=10.0, metavar="SECONDS", help="per request, retries included (10)"
    )
    send.add_argument(
        "--dry-run", action="store_true", help="send nothing: print each span as one JSON line instead"
    )
    add_json_option(send, "print what was sent as one JSON object")
    send.set_defaults(run=run)


def _no_subcommand(args: argparse.Namespace) -> int:
    """`waybook otel COMMAND`: send sessions to an OpenTelemetry backend as GenAI traces.

    Send session journals to an OpenTelemetry backend (OTLP/HTTP) as GenAI traces.

    Example: waybook otel send session.jsonl --endpoint http://127.0.0.1:6006/v1/traces
    """
    msg = "give a subcommand: waybook otel send PATH --endpoint URL (see waybook otel send --help)"
    raise UsageError(msg)


def run(args: argparse.Namespace) -> int:
    headers = _headers(args.header)
    if args.endpoint is None and not args.dry_run:
        msg = "give --endpoint URL (the OTLP/HTTP endpoint), or --dry-run to print the spans"
        raise UsageError(msg)
    if args.path is None and args.store is None:
        msg = "give a journal PATH, or --store URL (with ids, or none for every session journal)"
        raise UsageError(msg)
    if args.ids and args.store is None:
        msg = "more than one journal needs --store URL (the ids are journal ids in it)"
        raise UsageError(msg)
    if args.timeout <= 0:
        msg = f"--timeout {args.timeout}: give a positive number of seconds"
        raise UsageError(msg)
    patterns = redact_patterns(args)
    if patterns and args.content == "none":
        msg = "--redact-pattern and --redact-patterns mask content; they need --content metadata or full"
        raise UsageError(msg)
    otel = _otel()
    try:
        options = otel.OtelOptions(
            content=args.content, traces=args.traces, redact_patterns=tuple(patterns), provider=args.provider
        )
        endpoint = otel.traces_endpoint(args.endpoint) if args.endpoint is not None else None
    except (otel.OtelOptionError, RedactPatternError) as exc:
        raise UsageError(_in_cli_terms(str(exc))) from None
    if args.store is None:
        with open_journal(Path(args.path)) as journal:
            report = _send(otel, args, journal, None, options, endpoint, headers)
    else:
        with connect_store(args.store) as store:
            ids = [args.path, *args.ids] if args.path is not None else _every_session(store)
            report = _send(otel, args, _each(args.store, ids), store, options, endpoint, headers)
    _say(report, args)
    return OK


def _open(url: str, journal_id: str) -> SessionJournal:
    """A journal of the store at `url`, read-only: the one place this command opens one."""
    return open_in_store(url, journal_id)


def _each(url: str, ids: list[str]) -> Iterator[SessionJournal]:
    """Each journal opened when its turn comes and closed after it was read."""
    for journal_id in ids:
        with _open(url, journal_id) as journal:
            yield journal


def _every_session(store: JournalStore) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        page = store.list(role="session", after=cursor, limit=500)
        ids.extend(info.journal_id for info in page)
        cursor = page.cursor
        if cursor is None:
            return ids


def _send(
    otel: ModuleType,
    args: argparse.Namespace,
    journals: SessionJournal | Iterable[SessionJournal],
    store: JournalStore | None,
    options: OtelOptions,
    endpoint: str | None,
    headers: dict[str, str],
) -> SendReport:
    report: SendReport
    try:
        if args.dry_run:
            redactor = options.redactor()
            built = otel.spans_of(journals, store=store, options=options, since=args.since, redactor=redactor)
            for journal in built:
                for span in journal.spans:
                    sys.stdout.write(json.dumps(span.as_json(), sort_keys=True) + "\n")
            counts = dict(sorted(redactor.counts.items()))
            report = otel.SendReport(None, options.content, options.traces, built, counts)
        else:
            report = otel.send(
                journals,
                endpoint=endpoint,
                headers=headers,
                store=store,
                options=options,
                since=args.since,
                service_name=args.service_name,
                timeout=args.timeout,
            )
    except otel.OtelOptionError as exc:
        raise UsageError(_in_cli_terms(str(exc))) from None
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        msg = f"waybook otel send needs OpenTelemetry's SDK ({exc.name} is missing): "
        msg += "pip install 'waybook[otel]'"
        raise UsageError(msg) from None
    return report


def _say(report: SendReport, args: argparse.Namespace) -> None:
    if not report.journals:
        warn(f"{args.store}: no session journal to send")
    for journal in report.journals:
        for missing in journal.missing:
            where = "in the store" if args.store else "beside the journal file"
            warn(f"{journal.journal}: sub-agent journal {missing} is linked but not {where}; not sent")
    if report.content != "none":
        detail = ", ".join(f"{name}: {n}" for name, n in report.redacted.items())
        total = sum(report.redacted.values())
        warn(f"content sent redacted: masked {plural(total, 'secret')}" + (f" ({detail})" if detail else ""))
    if args.json:
        emit_json(report.as_json())
        return
    verb = "would send" if args.dry_run else "sent"
    for journal in report.journals:
        subagents = (
            f" with {plural(len(journal.subagents), 'sub-agent journal')}" if journal.subagents else ""
        )
        target = f" to {report.endpoint}" if report.endpoint else ""
        line = f"{verb} {plural(len(journal.spans), 'span')} in {plural(journal.traces, 'trace')}"
        (sys.stderr if args.dry_run else sys.stdout).write(f"{journal.journal}: {line}{subagents}{target}\n")


def _headers(given: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            msg = f"--header {item!r}: give NAME=VALUE (e.g. --header 'Authorization=Bearer TOKEN')"
            raise UsageError(msg)
        headers[key.strip()] = value
    return headers


def _in_cli_terms(message: str) -> str:
    for option, flag in (("since", "--since"), ("endpoint", "--endpoint"), ("content", "--content")):
        if message.startswith(option + " "):
            return flag + message[len(option) :]
    return message


def _otel() -> ModuleType:
    """waybook.export.otel, or a usage error naming the extra to install."""
    try:
        from waybook.export import otel
    except ImportError as exc:
        msg = f"waybook otel needs OpenTelemetry: pip install 'waybook[otel]' ({exc})"
        raise UsageError(msg) from None
    return otel
