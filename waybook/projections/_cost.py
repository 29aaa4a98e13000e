"""What the model requests of sessions cost: one entry per request, grouped by day, model, project or
session (ccusage's daily report, over any store of journals).

A request is an assistant turn that recorded usage with at least one token; every branch counts (an
abandoned branch was paid for too). Each request is priced on its own, at the rates of its model at its
own timestamp, since a long-context tier looks at one request's input. A model the price table does not
know is listed with its tokens and never priced as zero. Over many journals, a request recorded in
several of them (a fork's copied records, a session resumed into a new file: the same id, timestamp,
model and usage) counts once. Pure functions of records and of the price table passed in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, tzinfo
from typing import Any, Final, Literal

import attrs

from waybook.model import AssistantMessage, Header, Record
from waybook.projections._prices import Cost, PriceTable, price
from waybook.projections._tokens import Tokens, sum_tokens, tokens_of

GroupBy = Literal["day", "model", "project", "session"]
GROUPS: Final[tuple[GroupBy, ...]] = ("day", "model", "project", "session")
UNKNOWN_MODEL: Final = "(unknown model)"
NO_PROJECT: Final = "(no project)"


@attrs.frozen
class UsageEntry:
    """One model request: where it was recorded, when, by which model, its tokens and their cost (None
    when the price table has no price for the model, or no table was given)."""

    session: str
    record: str
    at: str
    model: str
    project: str
    tokens: Tokens
    cost: Cost | None


def instant(at: str) -> datetime:
    """A record's timestamp (RFC 3339 UTC, as session journals require) as an aware datetime."""
    return datetime.fromisoformat(at.replace("Z", "+00:00"))


def project_of(header: Header) -> str:
    """The folder a session worked in, as its header records it (`cwd` or `directory` in the metadata of
    the agent that wrote it: Claude Code, Codex, OpenCode), else NO_PROJECT."""
    for scope in (
        header.metadata,
        *(v for _, v in sorted(header.metadata.items()) if isinstance(v, Mapping)),
    ):
        for key in ("cwd", "directory"):
            if isinstance(scope.get(key), str) and scope[key]:
                return str(scope[key])
    return NO_PROJECT


def usage_entries(records: Iterable[Record], *, prices: PriceTable | None) -> tuple[UsageEntry, ...]:
    """One entry per assistant turn of `records` (one session journal) that recorded a token."""
    session, project = "", NO_PROJECT
    entries = []
    for record in records:
        body = record.body
        if isinstance(body, Header):
            session, project = body.journal, project_of(body)
        elif isinstance(body, AssistantMessage):
            tokens = tokens_of(body.usage)
            if tokens is None or tokens.total == 0:
                continue
            model = body.model or UNKNOWN_MODEL
            rates = None if prices is None or body.model is None else prices.rates(model, instant(record.at))
            cost = None if rates is None else price(tokens, rates)
            entries.append(UsageEntry(session, record.id, record.at, model, project, tokens, cost))
    return tuple(entries)


@attrs.frozen
class ModelCost:
    """One model's requests within a group."""

    model: str
    requests: int
    tokens: Tokens
    cost: Cost | None
    """None: not priced (the table has no price for the model)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "requests": self.requests,
            "tokens": self.tokens.as_json(),
            "cost_usd": None if self.cost is None else self.cost.as_json(),
        }


@attrs.frozen
class CostRow:
    """One group (a day, a model, a project or a session): its requests by model and their sums."""

    key: str
    models: tuple[ModelCost, ...]

    @property
    def requests(self) -> int:
        return sum(m.requests for m in self.models)

    @property
    def tokens(self) -> Tokens:
        return sum_tokens(m.tokens for m in self.models)

    @property
    def cost(self) -> Cost | None:
        """The cost of the priced models; None when no model of the group is priced."""
        priced = [m.cost for m in self.models if m.cost is not None]
        total = Cost()
        for cost in priced:
            total += cost
        return total if priced else None

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The models whose tokens the cost leaves out, because the table has no price for them."""
        return tuple(m.model for m in self.models if m.cost is None)

    def as_json(self, by: str | None) -> dict[str, Any]:
        cost = self.cost
        found: dict[str, Any] = {} if by is None else {by: self.key}
        return found | {
            "requests": self.requests,
            "tokens": self.tokens.as_json(),
            "cost_usd": None if cost is None else cost.as_json(),
            "unpriced_models": list(self.unpriced),
            "models": [m.as_json() for m in self.models],
        }


@attrs.frozen
class CostReport:
    """Rows of one grouping, in key order, and their total; `prices` names the table (None: none)."""

    by: GroupBy
    rows: tuple[CostRow, ...]
    total: CostRow
    prices: str | None
    timezone: str = "UTC"
    since: date | None = None
    until: date | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "timezone": self.timezone,
            "since": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
            "prices": self.prices,
            "rows": [row.as_json(self.by) for row in self.rows],
            "total": self.total.as_json(None),
        }


def _models(entries: Sequence[UsageEntry]) -> tuple[ModelCost, ...]:
    by_model: dict[str, list[UsageEntry]] = {}
    for entry in entries:
        by_model.setdefault(entry.model, []).append(entry)
    models = []
    for model, mine in sorted(by_model.items()):
        models.append(ModelCost(model, len(mine), sum_tokens(e.tokens for e in mine), _all_priced(mine)))
    return tuple(models)


def _all_priced(entries: Sequence[UsageEntry]) -> Cost | None:
    """The sum of the entries' costs; None if any is unpriced (a model is priced or not as a whole)."""
    total = Cost()
    for entry in entries:
        if entry.cost is None:
            return None
        total += entry.cost
    return total


def distinct(entries: Iterable[UsageEntry]) -> list[UsageEntry]:
    """`entries` without the repeats of one request recorded in several journals (same record id,
    timestamp, model and tokens): the first journal's is kept."""
    seen: set[tuple[str, str, str, Tokens]] = set()
    kept = []
    for entry in entries:
        key = (entry.record, entry.at, entry.model, entry.tokens)
        if key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


def cost_report(
    entries: Iterable[UsageEntry],
    *,
    by: GroupBy,
    prices: str | None,
    timezone: tzinfo = UTC,
    since: date | None = None,
    until: date | None = None,
) -> CostReport:
    """Group `entries` (of one journal or many) by `by`; days are dates in `timezone`, and `since` and
    `until` (inclusive) keep the requests of those days. `prices` names the table the entries were
    priced with, for the report."""
    if by not in GROUPS:
        msg = f"cost_report: by={by!r}; give one of {', '.join(GROUPS)}"
        raise ValueError(msg)
    groups: dict[str, list[UsageEntry]] = {}
    kept = []
    for entry in distinct(entries):
        day = instant(entry.at).astimezone(timezone).date()
        if (since is not None and day < since) or (until is not None and day > until):
            continue
        kept.append(entry)
        key = {
            "day": day.isoformat(),
            "model": entry.model,
            "project": entry.project,
            "session": entry.session,
        }
        groups.setdefault(key[by], []).append(entry)
    rows = tuple(CostRow(key, _models(mine)) for key, mine in sorted(groups.items()))
    name = getattr(timezone, "key", None) or str(timezone)
    return CostReport(by, rows, CostRow("total", _models(kept)), prices, name, since, until)
