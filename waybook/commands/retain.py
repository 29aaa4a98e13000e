r"""`waybook retain --store URL --older-than DURATION [--role R] [--meta K=V] [--erase-content | --purge]
[--dry-run] [--json]` (or `--set-policy`, `--show-policy`, `--clear-policy`): forget what is older than a
duration: erase its content or purge whole journals, with receipts.

Apply a retention policy to a store: erase the content of every record older than --older-than (an erasure
record per journal naming the policy; every digest stays), or with --purge remove every journal whose last
record is older (a purge receipt in the catalog each); then collect the blobs nothing references. --role and
--meta choose the journals. Without --older-than, the store's own policy (--set-policy) is applied. Journals
written before sealing cannot erase content and are listed as skipped (`waybook migrate`).

Example: waybook retain --store file:sessions --older-than 90d --dry-run
         waybook retain --store sqlite:agents.db --older-than 30d --role session \
             --meta env=test --purge --json
         waybook retain --store file:sessions --older-than 90d --set-policy --name gdpr-90d
         waybook retain --store file:sessions

The work is `waybook.stores.retain` (docs/erasure.md, "Retention"); this module reads the options in the
CLI's terms and prints the receipts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from typing import Any

from waybook.commands.common import emit_json
from waybook.commands.exits import OK, PROBLEM, UsageError, check_recorded, quoted, warn
from waybook.commands.store_option import add_store_option, connect_store, metadata_pair, store_errors
from waybook.commands.subcommand import add_command, add_json_option
from waybook.commands.terminal import say
from waybook.model import JOURNAL_ROLES
from waybook.stores import (
    DEFAULT_GRACE,
    JournalStore,
    RetentionPolicy,
    RetentionReport,
    StoreArgumentError,
    StoreError,
    parse_duration,
    retain,
    retention_policy,
    set_retention_policy,
)

_ROLES = tuple(role for role in JOURNAL_ROLES if role != "catalog")
MAX_NAME = 200
"""The longest policy name (`RetentionPolicy` refuses a longer one)."""


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(commands, "retain", __doc__)
    add_store_option(parser, ids=None, required=True)
    parser.add_argument(
        "--older-than", metavar="DURATION", help="records (or journals) older than this: 90d, 12h, 1w2d, 45m"
    )
    parser.add_argument("--role", choices=_ROLES, help="only journals of this role (default: every role)")
    parser.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="K=V",
        help="only journals whose metadata key K holds V (JSON or text, as for ls; repeat: all must hold)",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--erase-content", action="store_true", help="erase the records' content, keep the chain (default)"
    )
    action.add_argument("--purge", action="store_true", help="purge whole journals older than the cut")
    parser.add_argument(
        "--name", help="the policy's name, recorded with every action (default retain-<DURATION>)"
    )
    parser.add_argument("--reason", help="why (recorded with every action; default names the policy and cut)")
    parser.add_argument("--actor", help="who applies it (recorded)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be forgotten; write nothing")
    parser.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="blobs stored within this many seconds are kept by the collection that follows (default 3600)",
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--set-policy",
        action="store_true",
        help="record this selection as the store's policy (forgets nothing)",
    )
    policy.add_argument("--show-policy", action="store_true", help="print the store's policy")
    policy.add_argument("--clear-policy", action="store_true", help="remove the store's policy")
    add_json_option(parser, "print the report (every receipt) as JSON")
    parser.set_defaults(run=run)


def policy_of(args: argparse.Namespace) -> RetentionPolicy | None:
    """The policy the options describe; None when they describe none (the store's own applies)."""
    chosen = args.role is not None or args.meta or args.purge or args.erase_content or args.name is not None
    if args.older_than is None:
        if chosen:
            msg = "--role, --meta, --purge, --erase-content, --name describe a policy: give --older-than too"
            raise UsageError(msg)
        return None
    try:
        seconds = parse_duration(args.older_than)
    except StoreArgumentError as exc:
        msg = (
            f"--older-than {quoted(args.older_than)}: give a whole number and a unit (w, d, h, m, s), e.g. "
            "90d or 1w2d, more than 0 and at most 100 years"
        )
        raise UsageError(msg) from exc
    metadata: dict[str, Any] = {}
    for item in args.meta:
        key, value = metadata_pair(item)
        if key in metadata and metadata[key] != value:
            msg = f"--meta {quoted(item)}: --meta {quoted(key)} was given another value; a key holds one text"
            raise UsageError(msg)
        metadata[key] = value
    if args.name is not None and not (args.name.strip() and len(args.name) <= MAX_NAME):
        msg = (
            f"--name {quoted(args.name)}: give a short text (1 to {MAX_NAME} characters): the policy's name, "
            "recorded with every action"
        )
        raise UsageError(msg)
    return RetentionPolicy(
        older_than=seconds,
        action="purge" if args.purge else "erase-content",
        role=args.role,
        metadata=metadata,
        name=args.name or "",
    )


def run(args: argparse.Namespace) -> int:
    check_recorded("--actor", args.actor, what="who applies it")
    policy = policy_of(args)
    if args.reason is not None and not args.reason.strip():
        msg = "--reason must say why (it is recorded with every action), not be empty"
        raise UsageError(msg)
    if args.grace is not None and not (math.isfinite(args.grace) and args.grace >= 0):  # cannot be recorded
        msg = f"--grace {args.grace}: give the seconds (a finite number, 0 or more) a fresh blob is kept"
        raise UsageError(msg)
    given = [
        flag
        for flag, value in (
            ("--dry-run", args.dry_run or None),
            ("--reason", args.reason),
            ("--grace", args.grace),
        )
        if value is not None
    ]
    if (args.set_policy or args.show_policy or args.clear_policy) and given:
        msg = (
            f"{', '.join(given)} go with applying a policy (`waybook retain --store URL ...`), not with "
            "--set-policy, --show-policy or --clear-policy: a recorded policy holds no reason or grace"
        )
        raise UsageError(msg)
    if args.set_policy and policy is None:
        msg = "--set-policy records the policy the other options describe: give --older-than (and more)"
        raise UsageError(msg)
    if (args.show_policy or args.clear_policy) and policy is not None:
        msg = "--show-policy and --clear-policy take no policy options (--older-than, --role, --meta, ...)"
        raise UsageError(msg)
    with connect_store(args.store) as store, store_errors():
        if args.set_policy or args.clear_policy:
            record = set_retention_policy(store, policy, actor=args.actor)
            return _said(args, policy, f"catalog seq {record.seq}")
        if args.show_policy:
            return _said(args, _stored_policy(store, args.store), None)
        policy = policy or _stored_policy(store, args.store)
        if policy is None:
            msg = (
                f"--store {args.store} has no retention policy: give --older-than DURATION, or record one "
                "with --older-than DURATION --set-policy"
            )
            raise UsageError(msg)
        report = retain(
            store,
            policy,
            now=dt.datetime.now(dt.UTC),
            actor=args.actor,
            reason=args.reason,
            dry_run=args.dry_run,
            grace=DEFAULT_GRACE if args.grace is None else args.grace,
        )
    if args.json:
        emit_json(report.as_json())
    else:
        _print(report)
    for journal, why in report.damaged:
        warn(
            f"{journal} is damaged: {why.rstrip('.')}. It was left as it is, and no blob was collected; "
            f"`waybook verify --store {args.store} {journal}` reports the damage"
        )
    return PROBLEM if report.damaged else OK


def _stored_policy(store: JournalStore, url: str) -> RetentionPolicy | None:
    """The store's recorded policy; one that cannot be read (written by hand, or by another version) is a
    problem with the store (exit 1) that says how to replace it, not a mistake in the command line."""
    try:
        return retention_policy(store)
    except StoreArgumentError as exc:
        msg = (
            f"--store {url}: its recorded retention policy cannot be read ({exc}); record another with "
            "--older-than DURATION --set-policy, or remove it with --clear-policy"
        )
        raise StoreError(msg) from exc


def _said(args: argparse.Namespace, policy: RetentionPolicy | None, where: str | None) -> int:
    if args.json:
        document: dict[str, Any] = {"policy": None if policy is None else policy.as_json()}
        if where is not None:
            document["recorded"] = where
        emit_json(document)
        return OK
    if policy is None:
        say(f"{args.store}: no retention policy" + (f" ({where})" if where else ""))
        return OK
    shown = policy.as_json()
    scope = f" of role {policy.role}" if policy.role else ""
    meta = "".join(f" {k}={v}" for k, v in policy.metadata.items())
    verb = "purge journals" if policy.action == "purge" else "erase content"
    say(
        f"{args.store}: policy {shown['name']}: {verb} older than {shown['older_than']}{scope}"
        + (f" with{meta}" if meta else "")
        + (f" (recorded at {where})" if where else "")
    )
    return OK


def _print(report: RetentionReport) -> None:
    would = "would " if report.dry_run else ""
    action = "purge" if report.policy.action == "purge" else "erase"
    say(f"policy {report.policy.name}: {action} what is older than {report.cut}")
    if report.dry_run:
        for journal, seqs in report.planned:
            what = f"{len(seqs)} record(s)' content" if seqs else "the whole journal"
            say(f"  {would}{action} {journal}: {what}")
    for receipt in report.erased:
        erasure = ", ".join(str(head.seq) for head in receipt.erasures)
        say(
            f"  erased {len(receipt.erased)} record(s) of {receipt.journal} (erasure record {erasure}; "
            f"receipt {receipt.sha256[:16]})"
        )
    for purged in report.purged:
        say(
            f"  purged {purged.journal_id}: {purged.records} record(s); receipt at catalog seq "
            f"{purged.catalog_seq} (digest {purged.digest[:16]})"
        )
    for journal, why in report.skipped:
        say(f"  skipped {journal}: {why}")
    if not report.planned and not report.damaged:
        say("  nothing is older than the cut")
    elif report.dry_run:
        say("  nothing was written")
    if report.collected is not None:
        say(f"  blobs collected: {len(report.collected.removed)} ({report.collected.freed} bytes)")
    for journal, why in report.damaged:
        say(f"  damaged {journal}: {why}")
