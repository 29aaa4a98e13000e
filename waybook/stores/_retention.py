"""Retention: forget what is older than a cut, with a receipt for every action (docs/erasure.md).

`retain(store, policy, now=...)` takes the store's journals that the policy selects (role, metadata) and,
for the action `erase-content`, erases the content of every record written before `now - older_than`
(one erasure record per journal, naming the policy); for `purge`, purges every journal whose last record
is older than the cut (a purge receipt in the catalog each). Then the store's blobs that nothing
references any more are collected. The clock is the caller's (`now`), so a test moves it.

A store's standing policy is a `waybook.store.retention` entry of its catalog journal (the last one
wins; one with `"policy": null` clears it): `set_retention_policy` writes it, `retention_policy` reads
it, and `retain(store, None, now=...)` applies it.

Only sealed journals (schema 2) can erase content; an older journal is skipped and named in the report
(`waybook migrate` writes a sealed copy). Records with no content, or erased already, are left alone, so
a second run with the same clock writes nothing.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final, Literal, Protocol, runtime_checkable

import attrs

from waybook.journal import ErasureReceipt, SessionJournal, erase, is_sealable
from waybook.model import JOURNAL_ROLES, SEALED_SCHEMA, CustomEntry, Header, IntegrityError, Record
from waybook.stores._blobs import DEFAULT_GRACE, CollectReceipt
from waybook.stores._errors import JournalPurgedError, StoreArgumentError, UnknownJournalError
from waybook.stores._protocol import JournalStore
from waybook.stores._proving import open_journal
from waybook.stores._values import JournalInfo, PurgeReceipt

__all__ = [
    "RETENTION",
    "RetentionPolicy",
    "RetentionReport",
    "format_duration",
    "parse_duration",
    "retain",
    "retention_policy",
    "set_retention_policy",
]

RETENTION: Final = "waybook.store.retention"
"""The catalog entry type that holds a store's retention policy."""

Action = Literal["erase-content", "purge"]
ACTIONS: Final[tuple[Action, ...]] = ("erase-content", "purge")

_UNITS: Final = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION: Final = re.compile(r"(?:[0-9]{1,15}[wdhms])+")
_PART: Final = re.compile(r"([0-9]{1,15})([wdhms])")
"""A duration's parts; 15 digits are more than 100 years in seconds, and int() refuses over 4300."""


def parse_duration(text: object) -> int:
    """`90d`, `12h`, `1w2d`, `30m`, `45s` as seconds (more than 0). StoreArgumentError otherwise."""
    if type(text) is str and _DURATION.fullmatch(text.strip().lower()):
        seconds = sum(int(n) * _UNITS[unit] for n, unit in _PART.findall(text.strip().lower()))
        if 0 < seconds <= 100 * 366 * 86400:
            return seconds
    msg = (
        f"duration {text!r} is not one retention reads: give a whole number and a unit (w, d, h, m, s), "
        "e.g. 90d, 12h or 1w2d, more than 0 and at most 100 years"
    )
    raise StoreArgumentError(msg)


def format_duration(seconds: int) -> str:
    """Seconds as `parse_duration` reads them, in days, hours, minutes and seconds (`90d`, `1d12h`)."""
    parts = []
    for unit, size in list(_UNITS.items())[1:]:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def _check_older_than(seconds: object) -> int:
    if type(seconds) is not int or seconds <= 0:
        msg = f"older_than {seconds!r} must be a whole number of seconds, more than 0 (parse_duration('90d'))"
        raise StoreArgumentError(msg)
    return seconds


def _check_action(action: object) -> Action:
    for known in ACTIONS:
        if action == known:
            return known
    msg = f"retention action {action!r} is not one of {', '.join(ACTIONS)}"
    raise StoreArgumentError(msg)


def _check_role(role: object) -> str | None:
    if role is None:
        return None
    if role not in JOURNAL_ROLES or role == "catalog":
        roles = ", ".join(r for r in JOURNAL_ROLES if r != "catalog")
        msg = f"retention role {role!r} is not a journal role; use one of {roles}"
        raise StoreArgumentError(msg)
    return str(role)


def _check_metadata(metadata: object) -> dict[str, Any]:
    if not isinstance(metadata, Mapping) or not all(type(key) is str for key in metadata):
        msg = f"retention metadata {metadata!r:.60} must map metadata keys (text) to the values to match"
        raise StoreArgumentError(msg)
    return dict(metadata)


def _name_or_default(name: object) -> Any:
    """None, like "", asks for the default name (`retain-<duration>`); anything else is checked later."""
    return "" if name is None else name


def _check_name(name: object) -> str:
    if type(name) is not str or not name.strip() or len(name) > 200:
        msg = f"retention policy name {name!r:.60} must be a short non-empty text (it is recorded)"
        raise StoreArgumentError(msg)
    return name


@attrs.frozen(kw_only=True)
class RetentionPolicy:
    """What retention forgets: content (`erase-content`) or whole journals (`purge`) older than
    `older_than` seconds, of the journals of `role` (None: every role) whose metadata holds every item of
    `metadata`. `name` is recorded in every erasure record and purge reason it causes."""

    older_than: int = attrs.field(converter=_check_older_than)
    action: Action = attrs.field(default="erase-content", converter=_check_action)
    role: str | None = attrs.field(default=None, converter=_check_role)
    metadata: Mapping[str, Any] = attrs.field(factory=dict, converter=_check_metadata)
    name: str = attrs.field(default="", converter=_name_or_default)

    def __attrs_post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", f"retain-{format_duration(self.older_than)}")
        _check_name(self.name)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "older_than": format_duration(self.older_than),
            "action": self.action,
            "role": self.role,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RetentionPolicy:
        if not isinstance(data, Mapping):
            msg = f"a retention policy is a JSON object (name, older_than, action, ...), not {data!r:.60}"
            raise StoreArgumentError(msg)
        return cls(
            older_than=parse_duration(data.get("older_than")),
            action=data.get("action", "erase-content"),
            role=data.get("role"),
            metadata=data.get("metadata") or {},
            name=data.get("name") or "",
        )

    def cut(self, now: dt.datetime) -> dt.datetime:
        """The moment before which records are forgotten."""
        return _aware(now) - dt.timedelta(seconds=self.older_than)


@attrs.frozen(kw_only=True)
class RetentionReport:
    """What one `retain` run did (or, with `dry_run`, would do): the policy and its cut, an erasure
    receipt per journal whose content was erased, a purge receipt per journal purged, the seqs each
    journal would lose (dry run), the journals skipped and why, and the blob collection that followed."""

    policy: RetentionPolicy
    cut: str
    dry_run: bool
    erased: tuple[ErasureReceipt, ...] = ()
    purged: tuple[PurgeReceipt, ...] = ()
    planned: tuple[tuple[str, tuple[int, ...]], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    collected: CollectReceipt | None = None
    damaged: tuple[tuple[str, str], ...] = ()
    """The journals that could not be read (a broken chain, a corrupt record) and the error: left as they
    are, the others retained all the same."""

    @property
    def changed(self) -> bool:
        return bool(self.erased or self.purged)

    def as_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy.as_json(),
            "cut": self.cut,
            "dry_run": self.dry_run,
            "erased": [receipt.as_json() for receipt in self.erased],
            "purged": [receipt.as_json() for receipt in self.purged],
            "planned": [{"journal": journal, "seqs": list(seqs)} for journal, seqs in self.planned],
            "skipped": [{"journal": journal, "why": why} for journal, why in self.skipped],
            "blobs_collected": None if self.collected is None else self.collected.as_json(),
            "damaged": [{"journal": journal, "why": why} for journal, why in self.damaged],
        }


# --- the policy a store keeps -------------------------------------------------------------------------


@runtime_checkable
class _Catalogued(Protocol):
    def open_catalog(self) -> SessionJournal: ...
    def note_in_catalog(self, kind: str, data: dict[str, Any]) -> Record: ...


def _catalogued(store: object) -> _Catalogued:
    if not isinstance(store, _Catalogued):
        msg = f"{type(store).__name__} keeps no catalog a retention policy can be written to"
        raise StoreArgumentError(msg)
    return store


def set_retention_policy(
    store: JournalStore, policy: RetentionPolicy | None, *, actor: str | None = None
) -> Record:
    """Record `policy` as the store's retention policy (None clears it) in its catalog journal; returns
    the catalog record. Nothing is forgotten until `retain` runs."""
    if policy is not None and not isinstance(policy, RetentionPolicy):
        msg = f"set_retention_policy takes a RetentionPolicy or None, not {type(policy).__name__}"
        raise StoreArgumentError(msg)
    data: dict[str, Any] = {"policy": None if policy is None else policy.as_json()}
    if actor is not None:
        data["actor"] = actor
    return _catalogued(store).note_in_catalog(RETENTION, data)


def retention_policy(store: JournalStore) -> RetentionPolicy | None:
    """The store's retention policy: its catalog's last `waybook.store.retention` entry (None: none)."""
    last: Any = None
    with _catalogued(store).open_catalog() as catalog:
        for record in catalog.read():
            body = record.body
            if type(body) is CustomEntry and body.type == RETENTION and isinstance(body.data, dict):
                last = body.data.get("policy")
    # only the last entry is read: an earlier one that cannot be (replaced or cleared since) is history
    return None if last is None else RetentionPolicy.from_json(last)


# --- applying a policy ----------------------------------------------------------------------------------


def retain(
    store: JournalStore,
    policy: RetentionPolicy | None,
    *,
    now: dt.datetime,
    actor: str | None = None,
    reason: str | None = None,
    dry_run: bool = False,
    collect_blobs: bool = True,
    grace: float = DEFAULT_GRACE,
) -> RetentionReport:
    """Apply `policy` (None: the store's own, `retention_policy`) as of `now` (an aware datetime; a naive
    one is taken as UTC). Returns the report; with `dry_run`, what would be forgotten, and nothing is
    written. `reason` (default: the policy's name and cut) is recorded with each action. After the
    actions, the blobs nothing references and nobody stored within `grace` seconds are collected.

    A journal that cannot be read (an IntegrityError: a broken chain, a corrupt record) is left as it is
    and named in the report's `damaged`; the others are retained all the same, and no blob is collected
    (which blobs the damaged journal references is unknown).

    Raises StoreArgumentError when no policy is given and the store has none."""
    if not isinstance(now, dt.datetime):
        msg = f"retain's now must be a datetime (the clock the cut is measured from), not {now!r:.40}"
        raise StoreArgumentError(msg)
    if type(grace) not in (int, float) or not math.isfinite(grace) or grace < 0:
        msg = (
            f"retain's grace must be the seconds (a finite number, 0 or more) a fresh blob is kept, not "
            f"{grace!r:.40}; it is recorded with the blob collection, checked before anything is erased"
        )
        raise StoreArgumentError(msg)
    if policy is None:
        policy = retention_policy(store)
        if policy is None:
            msg = (
                f"{store.url} has no retention policy: give one (older_than, action, role, metadata), or "
                "record one with set_retention_policy"
            )
            raise StoreArgumentError(msg)
    elif not isinstance(policy, RetentionPolicy):
        msg = f"retain takes a RetentionPolicy or None (the store's own), not {type(policy).__name__}"
        raise StoreArgumentError(msg)
    cut = policy.cut(now)
    cut_text = _stamp(cut)
    why = reason if reason is not None else f"retention policy {policy.name}: older than {cut_text}"
    if type(why) is not str or not why.strip():
        msg = "retain's reason, when given, must say why (a short text recorded with each action)"
        raise StoreArgumentError(msg)
    erased: list[ErasureReceipt] = []
    purged: list[PurgeReceipt] = []
    planned: list[tuple[str, tuple[int, ...]]] = []
    skipped: list[tuple[str, str]] = []
    damaged: list[tuple[str, str]] = []
    for info in list(_selected(store, policy)):
        journal_id = info.journal_id
        try:
            outcome = _retain_journal(
                store, journal_id, policy, cut=cut, why=why, actor=actor, dry_run=dry_run
            )
        except IntegrityError as exc:  # a damaged journal is named; the others are still retained
            damaged.append((journal_id, str(exc)))
            continue
        except (JournalPurgedError, UnknownJournalError):  # gone since the listing: another process's doing
            skipped.append((journal_id, "purged or removed by another process while retention ran"))
            continue
        if outcome.skipped is not None:
            skipped.append((journal_id, outcome.skipped))
        if outcome.planned is not None:
            planned.append((journal_id, outcome.planned))
        if outcome.erased is not None:
            erased.append(outcome.erased)
        if outcome.purged is not None:
            purged.append(outcome.purged)
    collected = None
    # a damaged journal's blob references are unknown: collecting now could free blobs it still uses
    if collect_blobs and not dry_run and (erased or purged) and not damaged:
        collected = store.blobs.collect(grace=grace)
    return RetentionReport(
        policy=policy,
        cut=cut_text,
        dry_run=dry_run,
        erased=tuple(erased),
        purged=tuple(purged),
        planned=tuple(planned),
        skipped=tuple(skipped),
        collected=collected,
        damaged=tuple(damaged),
    )


@attrs.frozen
class _Outcome:
    """What retention did to one journal (or would do): the seqs it planned (empty: the whole journal),
    the receipt of what it did, or why it skipped the journal; all None: nothing to forget there."""

    planned: tuple[int, ...] | None = None
    erased: ErasureReceipt | None = None
    purged: PurgeReceipt | None = None
    skipped: str | None = None


def _retain_journal(
    store: JournalStore,
    journal_id: str,
    policy: RetentionPolicy,
    *,
    cut: dt.datetime,
    why: str,
    actor: str | None,
    dry_run: bool,
) -> _Outcome:
    """Apply `policy` to one journal of `store`; IntegrityError (nothing done) when it is damaged."""
    if policy.action == "purge":
        last = _last_at(store, journal_id, dry_run=dry_run)
        if last is None or last >= cut:
            return _Outcome()
        if dry_run:
            return _Outcome(planned=())
        return _Outcome(planned=(), purged=store.purge(journal_id, reason=why, actor=actor))
    with _opened(store, journal_id, dry_run=dry_run) as journal:
        finish = None if dry_run else getattr(journal, "finish_erasures", None)
        if callable(finish):  # a pending erasure's records, taken by a new erasure, would fail verify
            finish()
        seqs, unsealed = _old_content(journal, cut)
        if unsealed:
            if not seqs:
                return _Outcome()
            return _Outcome(
                skipped=(
                    f"written before sealing (schema 1): its content cannot be erased; "
                    f"`waybook migrate --store {store.url} {journal_id} --to NEW_ID` writes a sealed copy"
                )
            )
        if not seqs:
            return _Outcome()
        if dry_run:
            return _Outcome(planned=tuple(seqs))
        receipt = erase(journal, seqs, reason=why, actor=actor, policy=policy.name)
        return _Outcome(planned=tuple(seqs), erased=receipt)


def _opened(store: JournalStore, journal_id: str, *, dry_run: bool) -> SessionJournal:
    """The journal, read-only for a dry run: a writer's open may write (it finishes an interrupted
    erasure), and a dry run writes nothing; the read-only open refuses such a journal instead
    (ErasureInterruptedError, named in the report's `damaged`)."""
    return open_journal(store, journal_id) if dry_run else store.open(journal_id)


def _selected(store: JournalStore, policy: RetentionPolicy) -> Iterator[JournalInfo]:
    """Every journal the policy's role and metadata select, hidden ones included (still stored)."""
    after: str | None = None
    while True:
        page = store.list(role=policy.role, metadata=policy.metadata, hidden=True, after=after, limit=500)
        yield from page.journals
        if page.cursor is None:
            return
        after = page.cursor


def _old_content(journal: SessionJournal, cut: dt.datetime) -> tuple[list[int], bool]:
    """The seqs of records written before `cut` whose sealed content is still there, and whether the
    journal is one that cannot erase (not sealed)."""
    seqs: list[int] = []
    sealed = True
    for record in journal.read():
        body = record.body
        if type(body) is Header:
            sealed = body.schema >= SEALED_SCHEMA
            continue
        if record.erased is None and is_sealable(body) and _when(record.at) < cut:
            seqs.append(record.seq)
    return seqs, not sealed


def _last_at(store: JournalStore, journal_id: str, *, dry_run: bool) -> dt.datetime | None:
    with _opened(store, journal_id, dry_run=dry_run) as journal:
        head = journal.head()
        if head.seq == 0:
            return None
        (last,) = journal.read(after=head.seq - 1, limit=1)
        return _when(last.at)


def _when(at: str) -> dt.datetime:
    return _aware(dt.datetime.fromisoformat(at))


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
